import type { TurnStore } from "../api/turn";
import { frontierFields } from "../turn-statements";
import type { PgContext, Q } from "./context";
import { markInstalledOn } from "./frontiers";
import { appendHeaderOn } from "./headers";
import { finishRequestOn } from "./model-requests";
import { appendOn } from "./transcript";

type Row = Record<string, unknown>;


/** TurnStore over PostgreSQL: the statements of store/turn-statements.ts, the two commits one fenced transaction each. */
export function pgTurn(c: PgContext): TurnStore {
  const one = async <R>(q: Q, text: string, values: unknown[] = []) => (await c.rows<R>(q, text, values))[0];
  return {
    pinOf: (sessionId) =>
      c.read(async (db) => {
        const row = await one<{ id: number; record: { text: string } }>(db, "SELECT id, record FROM header_records WHERE session_id = $1 AND type = 'header_pin' ORDER BY id DESC LIMIT 1", [sessionId]);
        return row ? { id: row.id, text: row.record.text } : undefined;
      }),
    pinIdOf: (sessionId) => c.read(async (db) => (await one<{ id: number }>(db, "SELECT id FROM header_records WHERE session_id = $1 AND type = 'header_pin' ORDER BY id DESC LIMIT 1", [sessionId]))?.id),
    pendingFrontierOf: (sessionId) => c.read(async (db) => frontierFields(await one<Row>(db, "SELECT * FROM frontiers WHERE session_id = $1 AND installed_at_ms IS NULL ORDER BY created_at_ms DESC, id DESC LIMIT 1", [sessionId]))),
    installedFrontierOf: (sessionId) =>
      c.read(async (db) =>
        frontierFields(await one<Row>(db, "SELECT * FROM frontiers WHERE session_id = $1 AND installed_at_ms IS NOT NULL AND header_record_id IS NOT NULL ORDER BY installed_at_ms DESC, created_at_ms DESC LIMIT 1", [sessionId])),
      ),
    hasOpenWait: (sessionId) => c.read(async (db) => (await one(db, "SELECT id FROM waits WHERE session_id = $1 AND state = 'waiting' LIMIT 1", [sessionId])) !== undefined),
    lastReply: (sessionId) =>
      c.read(async (db) => {
        const rows = await c.rows<{ kind: string; ref: string; request_id: string | null; call_id: string | null }>(
          db,
          "SELECT * FROM transcript_records WHERE session_id = $1 AND seq >= (SELECT max(seq) FROM transcript_records WHERE session_id = $1 AND kind = 'reply') ORDER BY seq",
          [sessionId],
        );
        if (rows.length === 0) return null;
        const requestId = rows[0]!.ref;
        const reply = (await one<{ reply: unknown }>(db, "SELECT reply FROM model_requests WHERE id = $1", [requestId]))!.reply;
        const answers = [];
        for (const row of rows.slice(1)) {
          if (row.request_id !== requestId) continue;
          const status = row.kind === "cell" ? ((await one<{ status: string }>(db, "SELECT status FROM executions WHERE id = $1", [row.ref]))?.status ?? null) : null;
          answers.push({ kind: row.kind, ref: row.ref, callId: row.call_id ?? null, executionStatus: status });
        }
        return { requestId, reply, answers };
      }),
    adoptionMark: () => c.read(async (db) => (await one<{ mark: number }>(db, "SELECT coalesce(max(id), 0) AS mark FROM orientation_adoptions"))!.mark),
    commitModelReply: (sessionId, id, end) =>
      c.write(sessionId, async (tx) => {
        await finishRequestOn(tx, id, end);
        return appendOn(c, tx, { sessionId, kind: "reply", ref: id, atMs: end.endedAtMs });
      }),
    installPin: (pin) =>
      c.write(pin.sessionId, async (tx) => {
        const id = await appendHeaderOn(tx, { sessionId: pin.sessionId, type: "header_pin", digest: pin.digest, record: pin.record, atMs: pin.pinnedAtMs });
        await markInstalledOn(tx, pin.sessionId, pin.frontierId, id, pin.installedAtMs);
        return id;
      }),
  };
}
