import { and, asc, eq, isNull, sql, type AnyColumn } from "drizzle-orm";
import { headerRecords, orientationAdoptions, orientationCandidates } from "../../db/pg-schema";
import type { OrientationStore } from "../api/orientation";
import { scopeColumns, scopeOf, type AdoptionRow, type CandidateRow, type CurrentSource, type Scope } from "../orientation";
import type { PgContext, Q } from "./context";
import { appendHeaderOn } from "./headers";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;
/** The advisory key stagings and adoptions take: they are decided one at a time, as on SQLite. */
const ORIENTATION = "klbr:orientation";

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
    stageCandidate: (row, repeat) =>
      c.writeHost(async (tx) => {
        // As SQLite's BEGIN IMMEDIATE: two stagings of one candidate id are one after the other.
        await c.serialize(tx, ORIENTATION);
        const existing = first<CandidateRow>(await tx.select().from(orientationCandidates).where(eq(orientationCandidates.id, row.id)));
        if (existing) {
          repeat(existing);
          return { row: existing, created: false };
        }
        return { row: first<CandidateRow>(await tx.insert(orientationCandidates).values({ ...row, status: "staged" }).returning())!, created: true };
      }),
    adoptCandidate: (adoption, rules, headerAtMs) =>
      c.write(adoption.sessionId, async (tx) => {
        // Adoptions one after the other (an operation id answered once; of two racing on one target the later is the source),
        // and the session's header observations with them (what the plan read is what it appends to).
        await c.serialize(tx, ORIENTATION);
        await c.serialize(tx, adoption.sessionId);
        const done = first<AdoptionRow>(await tx.select().from(orientationAdoptions).where(eq(orientationAdoptions.operationId, adoption.operationId)));
        if (done) {
          rules.repeat(done);
          return done.reply as never;
        }
        const candidate = first<CandidateRow>(await tx.select().from(orientationCandidates).where(eq(orientationCandidates.id, adoption.candidateId)));
        rules.candidate(candidate);
        const scope = scopeOf(candidate!);
        const [row] = await tx
          .insert(orientationAdoptions)
          .values({ ...adoption, target: candidate!.target, ...scopeColumns(scope), reply: {} })
          .returning({ id: orientationAdoptions.id });
        await tx.update(orientationCandidates).set({ status: "adopted" }).where(eq(orientationCandidates.id, candidate!.id));
        const { sessionId } = adoption;
        const chain = (await tx.select({ record: headerRecords.record }).from(headerRecords).where(eq(headerRecords.sessionId, sessionId)).orderBy(asc(headerRecords.id))).map((r) => r.record);
        const { append, result } = rules.header(chain, { global: await currentSourcesOn(tx, { kind: "global" }), own: await currentSourcesOn(tx, { kind: "session", session_id: sessionId }) });
        if (append !== null) await appendHeaderOn(tx, { sessionId, ...append, atMs: headerAtMs });
        const reply = rules.reply(candidate!, result);
        await tx.update(orientationAdoptions).set({ reply }).where(eq(orientationAdoptions.id, row!.id));
        return reply;
      }),
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
