import { and, asc, eq, isNull, sql, type AnyColumn } from "drizzle-orm";
import { orientationAdoptions, orientationCandidates } from "../../db/pg-schema";
import type { OrientationStore } from "../api/orientation";
import { scopeOf, type AdoptionRow, type CandidateRow, type CurrentSource, type Scope } from "../orientation";
import type { PgContext, Q } from "./context";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

function inScope(table: typeof orientationCandidates | typeof orientationAdoptions, scope: Scope) {
  return scope.kind === "global" ? and(eq(table.scopeKind, "global"), isNull(table.scopeSessionId)) : and(eq(table.scopeKind, "session"), eq(table.scopeSessionId, scope.session_id));
}

/** Candidates staged for a session's scope (global and its own), oldest first, on `q`. */
export async function stagedOn(q: Q, sessionId: string): Promise<CandidateRow[]> {
  const staged = (scope: Scope) => q.select().from(orientationCandidates).where(and(inScope(orientationCandidates, scope), eq(orientationCandidates.status, "staged"))) as Promise<CandidateRow[]>;
  const rows = [...(await staged({ kind: "global" })), ...(await staged({ kind: "session", session_id: sessionId }))];
  return rows.sort((a, b) => a.stagedAtMs - b.stagedAtMs || (a.id < b.id ? -1 : 1));
}

/** The sources adopted for exactly `scope`, per target the newest adoption, by target (store/orientation.ts), on `q`. */
export async function currentSourcesOn(q: Q, scope: Scope): Promise<CurrentSource[]> {
  const rows = await q
    .select({ adoption: orientationAdoptions, text: orientationCandidates.text, digest: orientationCandidates.digest })
    .from(orientationAdoptions)
    .innerJoin(orientationCandidates, eq(orientationCandidates.id, orientationAdoptions.candidateId))
    .where(inScope(orientationAdoptions, scope))
    .orderBy(asc(orientationAdoptions.id));
  const byTarget = new Map<string, CurrentSource>();
  for (const { adoption: a, text, digest } of rows) {
    byTarget.set(a.target, { target: a.target, candidate_id: a.candidateId, digest, text, adopted_at_ms: a.adoptedAtMs, execution_id: a.executionId, operation_id: a.operationId });
  }
  return [...byTarget.values()].sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
}

/** OrientationStore over PostgreSQL (candidates and adoptions are global or scoped: written under no one lease, as in SQLite). */
export function pgOrientation(c: PgContext): OrientationStore {
  return {
    getCandidate: (id) => c.read(async (db) => first<CandidateRow>(await db.select().from(orientationCandidates).where(eq(orientationCandidates.id, id)))),
    insertCandidate: (row) => c.writeHost(async (tx) => first<CandidateRow>(await tx.insert(orientationCandidates).values({ ...row, status: "staged" }).returning())!),
    markAdopted: (id) => c.writeHost(async (tx) => void (await tx.update(orientationCandidates).set({ status: "adopted" }).where(eq(orientationCandidates.id, id)))),
    findAdoption: (operationId) => c.read(async (db) => first<AdoptionRow>(await db.select().from(orientationAdoptions).where(eq(orientationAdoptions.operationId, operationId)))),
    insertAdoption: (row) => c.writeHost(async (tx) => first<AdoptionRow>(await tx.insert(orientationAdoptions).values(row).returning())!),
    setAdoptionReply: (id, reply) => c.writeHost(async (tx) => void (await tx.update(orientationAdoptions).set({ reply }).where(eq(orientationAdoptions.id, id)))),
    currentSources: (scope) => c.read((db) => currentSourcesOn(db, scope)),
    stagedCandidates: (sessionId) => c.read((db) => stagedOn(db, sessionId)),
    adoptedScopes: () =>
      c.read(async (db) => {
        const rows = await db
          .selectDistinct({ scopeKind: orientationAdoptions.scopeKind, scopeSessionId: orientationAdoptions.scopeSessionId })
          .from(orientationAdoptions)
          // NULLS FIRST: SQLite sorts a null first, so the global scope (no session) leads in both.
          .orderBy(asc(orientationAdoptions.scopeKind), sqlNullsFirst(orientationAdoptions.scopeSessionId));
        return rows.map(scopeOf);
      }),
  };
}

const sqlNullsFirst = (column: AnyColumn) => sql`${column} ASC NULLS FIRST`;
