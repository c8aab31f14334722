import type { TranscribeStore } from "../api/transcribe";
import type { PgContext, Q } from "./context";
import { appendOn, maxRefOn } from "./transcript";

type NewInput = { id: number; attention: { effective?: { action?: string } } | null; consumed_at_ms: number | null };

/** TranscribeStore over PostgreSQL (store/transcribe.ts: read without the lock, append under it only when there is something new). */
export function pgTranscribe(c: PgContext): TranscribeStore {
  const newSince = async (q: Q, sessionId: string, pinId: number) => {
    const inputs = await c.rows<NewInput>(q, "SELECT id, attention, consumed_at_ms FROM events WHERE session_id = $1 AND direction = 'in' AND id > $2 ORDER BY id", [sessionId, await maxRefOn(c, q, sessionId, "input")]);
    const after = Math.max(await maxRefOn(c, q, sessionId, "observation"), pinId);
    const revisions = await c.rows<{ id: number }>(q, "SELECT id FROM header_records WHERE session_id = $1 AND id > $2 AND type = 'header_revision' ORDER BY id", [sessionId, after]);
    return { inputs, revisions };
  };
  return {
    transcribeNew: async (sessionId, pinId, now) => {
      const seen = await c.read((db) => newSince(db, sessionId, pinId));
      if (seen.inputs.length === 0 && seen.revisions.length === 0) return;
      await c.write(sessionId, async (tx) => {
        // One intake of a session at a time, as BEGIN IMMEDIATE gives SQLite: read again under it.
        await c.serialize(tx, sessionId);
        const at = now();
        const { inputs, revisions } = await newSince(tx, sessionId, pinId);
        for (const e of inputs) {
          if (e.attention?.effective?.action === "ignore") continue;
          await appendOn(c, tx, { sessionId, kind: "input", ref: String(e.id), atMs: at });
          if (e.consumed_at_ms === null) await c.rows(tx, "UPDATE events SET consumed_at_ms = $1 WHERE id = $2 AND consumed_at_ms IS NULL", [at, e.id]);
        }
        for (const h of revisions) await appendOn(c, tx, { sessionId, kind: "observation", ref: String(h.id), atMs: at });
      });
    },
  };
}
