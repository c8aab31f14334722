import type Database from "better-sqlite3";
import { maxRef } from "./transcript";
import { turnStatements } from "./turn-statements";

/** An input event not in the transcript yet. */
interface NewInput {
  id: number;
  attention: string | null;
  consumed_at_ms: number | null;
}

/** A transcript record the intake appends (the session's own append writes it). */
export type IntakeRecord = { kind: "input" | "observation"; ref: string; atMs: number };

/** A session's inputs and header revisions after the last ones its transcript took in (the pin covers the revisions before it). */
function newSince(sqlite: Database.Database, sessionId: string, pinId: number): { inputs: NewInput[]; revisions: Array<{ id: number }> } {
  const st = turnStatements(sqlite);
  const inputs = st.newInputs.all(sessionId, maxRef(sqlite, sessionId, "input")) as NewInput[];
  const revisions = st.newRevisions.all(sessionId, Math.max(maxRef(sqlite, sessionId, "observation"), pinId)) as Array<{ id: number }>;
  return { inputs, revisions };
}

/**
 * Take a session's new inputs (consumed: the model reads them now) and header observations into
 * its transcript before a request. Most steps find nothing new, and that is read without the write
 * lock: BEGIN IMMEDIATE is taken only when there is something to append, and under it the rows are
 * read again and appended exactly as when the lock was always taken.
 */
export function transcribeNew(sqlite: Database.Database, sessionId: string, pinId: number, now: () => number, append: (record: IntakeRecord) => void): void {
  const seen = newSince(sqlite, sessionId, pinId);
  if (seen.inputs.length === 0 && seen.revisions.length === 0) return;
  const st = turnStatements(sqlite);
  sqlite
    .transaction(() => {
      const at = now();
      const { inputs, revisions } = newSince(sqlite, sessionId, pinId);
      for (const e of inputs) {
        const effective = e.attention ? (JSON.parse(e.attention) as { effective?: { action?: string } }).effective?.action : undefined;
        if (effective === "ignore") continue;
        append({ kind: "input", ref: String(e.id), atMs: at });
        if (e.consumed_at_ms === null) st.consume.run(at, e.id);
      }
      for (const h of revisions) append({ kind: "observation", ref: String(h.id), atMs: at });
    })
    .immediate();
}
