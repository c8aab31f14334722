import { and, asc, eq, isNull } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { orientationAdoptions, orientationCandidates } from "../db/schema";
import { placeholder, preparedPerConnection } from "./prepared";

/** An orientation scope (C11): every session, or one session. */
export type Scope = { kind: "global" } | { kind: "session"; session_id: string };

/** One candidate row. */
export type CandidateRow = typeof orientationCandidates.$inferSelect;

/** One adoption row. */
export type AdoptionRow = typeof orientationAdoptions.$inferSelect;

/** A scope as its two columns. */
export function scopeColumns(scope: Scope): { scopeKind: Scope["kind"]; scopeSessionId: string | null } {
  return scope.kind === "global" ? { scopeKind: "global", scopeSessionId: null } : { scopeKind: "session", scopeSessionId: scope.session_id };
}

/** The scope a row names, as the wire shows it. */
export function scopeOf(row: { scopeKind: Scope["kind"]; scopeSessionId: string | null }): Scope {
  return row.scopeKind === "global" ? { kind: "global" } : { kind: "session", session_id: row.scopeSessionId! };
}

function inScope(table: typeof orientationCandidates | typeof orientationAdoptions, scope: Scope) {
  return scope.kind === "global"
    ? and(eq(table.scopeKind, "global"), isNull(table.scopeSessionId))
    : and(eq(table.scopeKind, "session"), eq(table.scopeSessionId, scope.session_id));
}

/** One candidate by id. */
export function getCandidate(db: HostDb, id: string): CandidateRow | undefined {
  return db.select().from(orientationCandidates).where(eq(orientationCandidates.id, id)).get();
}

/** Insert a staged candidate. */
export function insertCandidate(db: HostDb, row: Omit<typeof orientationCandidates.$inferInsert, "status">): CandidateRow {
  return db.insert(orientationCandidates).values({ ...row, status: "staged" }).returning().get();
}

/** Mark a candidate adopted (it stays so once it has been an instruction source). */
export function markAdopted(db: HostDb, id: string): void {
  db.update(orientationCandidates).set({ status: "adopted" }).where(eq(orientationCandidates.id, id)).run();
}

/** The adoption an operation id already made, if any. */
export function findAdoption(db: HostDb, operationId: string): AdoptionRow | undefined {
  return db.select().from(orientationAdoptions).where(eq(orientationAdoptions.operationId, operationId)).get();
}

/** Insert an adoption. */
export function insertAdoption(db: HostDb, row: typeof orientationAdoptions.$inferInsert): AdoptionRow {
  return db.insert(orientationAdoptions).values(row).returning().get();
}

/** Set the reply an adoption was answered with. */
export function setAdoptionReply(db: HostDb, id: number, reply: unknown): void {
  db.update(orientationAdoptions).set({ reply }).where(eq(orientationAdoptions.id, id)).run();
}

/** One adopted source of a scope, as `orientation.current` lists it (C11). */
export interface CurrentSource {
  target: string;
  candidate_id: string;
  digest: string;
  text: string;
  adopted_at_ms: number;
  execution_id: string;
  operation_id: string;
}

/**
 * The instruction sources adopted for exactly `scope`: per target the newest adoption (a later
 * one replaces an earlier one), sorted by target.
 */
export function currentSources(db: HostDb, scope: Scope): CurrentSource[] {
  const rows = scope.kind === "global" ? adoptionStatements(db).global.all() : adoptionStatements(db).session.all({ sessionId: scope.session_id });
  const byTarget = new Map<string, CurrentSource>();
  for (const { adoption: a, text, digest } of rows) {
    byTarget.set(a.target, {
      target: a.target,
      candidate_id: a.candidateId,
      digest,
      text,
      adopted_at_ms: a.adoptedAtMs,
      execution_id: a.executionId,
      operation_id: a.operationId,
    });
  }
  // Targets are identifiers (ASCII), so UTF-16 order is byte order.
  return [...byTarget.values()].sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
}

// Both scopes' adoptions are read for every new generation's header and every model request:
// prepared once per connection (building them through drizzle per call cost about 0.5 ms a pair).
const adoptionStatements = preparedPerConnection((db: HostDb) => {
  const adoptions = (scope: Scope) =>
    db
      .select({ adoption: orientationAdoptions, text: orientationCandidates.text, digest: orientationCandidates.digest })
      .from(orientationAdoptions)
      .innerJoin(orientationCandidates, eq(orientationCandidates.id, orientationAdoptions.candidateId))
      .where(inScope(orientationAdoptions, scope))
      .orderBy(asc(orientationAdoptions.id))
      .prepare();
  return { global: adoptions({ kind: "global" }), session: adoptions({ kind: "session", session_id: placeholder("sessionId") }) };
});

/** Candidates staged (not yet adopted) for a session's scope: global ones and its own, oldest first. */
export function stagedCandidates(db: HostDb, sessionId: string): CandidateRow[] {
  const staged = (scope: Scope) =>
    db.select().from(orientationCandidates).where(and(inScope(orientationCandidates, scope), eq(orientationCandidates.status, "staged"))).all();
  return [...staged({ kind: "global" }), ...staged({ kind: "session", session_id: sessionId })].sort(
    (a, b) => a.stagedAtMs - b.stagedAtMs || (a.id < b.id ? -1 : 1),
  );
}

/** Every scope that has an adoption, global first. */
export function adoptedScopes(db: HostDb): Scope[] {
  const rows = db
    .selectDistinct({ scopeKind: orientationAdoptions.scopeKind, scopeSessionId: orientationAdoptions.scopeSessionId })
    .from(orientationAdoptions)
    .orderBy(asc(orientationAdoptions.scopeKind), asc(orientationAdoptions.scopeSessionId))
    .all();
  return rows.map(scopeOf);
}

/** A candidate as evidence, logs and the frontier show it. */
export function candidateView(row: CandidateRow): Record<string, unknown> {
  return {
    candidate_id: row.id,
    target: row.target,
    scope: scopeOf(row),
    digest: row.digest,
    status: row.status,
    text: row.text,
    session_id: row.sessionId,
    execution_id: row.executionId,
    request_id: row.requestId,
    staged_at_ms: row.stagedAtMs,
  };
}
