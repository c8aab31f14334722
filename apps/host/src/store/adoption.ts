// orientation.stage and orientation.adopt on SQLite, each one immediate transaction (see
// api/orientation.ts: stageCandidate, adoptCandidate).
import type { HostDb } from "../db/open";
import type { orientationCandidates } from "../db/schema";
import type { AdoptRules } from "./api/orientation";
import { appendHeaderRecord, headerChain } from "./headers";
import { currentSources, findAdoption, getCandidate, insertAdoption, insertCandidate, markAdopted, scopeColumns, scopeOf, setAdoptionReply, type CandidateRow } from "./orientation";

/** See OrientationStore.stageCandidate. */
export function stageCandidate(db: HostDb, row: Omit<typeof orientationCandidates.$inferInsert, "status">, repeat: (existing: CandidateRow) => void): { row: CandidateRow; created: boolean } {
  return db.transaction(
    (tx) => {
      const existing = getCandidate(tx as never, row.id);
      if (existing) {
        repeat(existing);
        return { row: existing, created: false };
      }
      return { row: insertCandidate(tx as never, row), created: true };
    },
    { behavior: "immediate" },
  );
}

/** See OrientationStore.adoptCandidate. */
export function adoptCandidate<R>(db: HostDb, adoption: { operationId: string; candidateId: string; sessionId: string; executionId: string; requestId: string; step: number; adoptedAtMs: number }, rules: AdoptRules<R>, headerAtMs: number): R {
  return db.transaction(
    (t) => {
      const tx = t as never as HostDb;
      const done = findAdoption(tx, adoption.operationId);
      if (done) {
        rules.repeat(done);
        return done.reply as R;
      }
      const candidate = getCandidate(tx, adoption.candidateId);
      rules.candidate(candidate);
      const scope = scopeOf(candidate!);
      const row = insertAdoption(tx, { ...adoption, target: candidate!.target, ...scopeColumns(scope), reply: {} });
      markAdopted(tx, candidate!.id);
      const { sessionId } = adoption;
      const { append, result } = rules.header(headerChain(tx, sessionId), { global: currentSources(tx, { kind: "global" }), own: currentSources(tx, { kind: "session", session_id: sessionId }) });
      if (append !== null) appendHeaderRecord(tx, { sessionId, ...append, atMs: headerAtMs });
      const reply = rules.reply(candidate!, result);
      setAdoptionReply(tx, row.id, reply);
      return reply;
    },
    { behavior: "immediate" },
  );
}
