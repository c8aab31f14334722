import { installedFrontierOf, pendingFrontierOf, pinIdOf, pinOf, turnStatements } from "../turn-statements";
import { appendHeaderRecord } from "../headers";
import { markInstalled } from "../frontiers";
import type { TurnStore } from "../api/turn";
import type { SqliteContext } from "./context";
import { appendStatement } from "./transcript";

/** TurnStore over the prepared statements of a model step (store/turn-statements.ts). */
export function sqliteTurn(c: SqliteContext): TurnStore {
  // Prepared on first use, not at construction (a read-only store over an old log has fewer tables).
  const st = () => turnStatements(c.sqlite);
  const append = appendStatement(c.sqlite);
  let commitReply: ((sessionId: string, id: string, end: Parameters<TurnStore["commitModelReply"]>[2]) => number) | undefined;
  const commit = () =>
    (commitReply ??= c.sqlite.transaction((sessionId: string, id: string, end: Parameters<TurnStore["commitModelReply"]>[2]) => {
    st().finishRequest.run({ id, reply: JSON.stringify(end.reply), responseModel: end.responseModel, usage: end.usage === null ? null : JSON.stringify(end.usage), retries: end.retries, endedAtMs: end.endedAtMs });
    return append({ sessionId, kind: "reply", ref: id, atMs: end.endedAtMs });
  }));
  return {
    pinOf: async (sessionId) => pinOf(c.sqlite, sessionId),
    pinIdOf: async (sessionId) => pinIdOf(c.sqlite, sessionId),
    pendingFrontierOf: async (sessionId) => pendingFrontierOf(c.sqlite, sessionId),
    installedFrontierOf: async (sessionId) => installedFrontierOf(c.sqlite, sessionId),
    hasOpenWait: async (sessionId) => st().openWait.get(sessionId) !== undefined,
    lastReply: async (sessionId) => {
      const rows = st().lastReplyRows.all(sessionId, sessionId) as Array<{ kind: string; ref: string; request_id: string | null; call_id: string | null }>;
      if (rows.length === 0) return null;
      const requestId = rows[0]!.ref;
      const reply = JSON.parse((st().reply.get(requestId) as { reply: string }).reply) as unknown;
      const answers = rows
        .slice(1)
        .filter((row) => row.request_id === requestId)
        .map((row) => ({
          kind: row.kind,
          ref: row.ref,
          callId: row.call_id ?? null,
          executionStatus: row.kind === "cell" ? ((st().executionStatus.get(row.ref) as { status: string } | undefined)?.status ?? null) : null,
        }));
      return { requestId, reply, answers };
    },
    adoptionMark: async () => (st().adoptionMark.get() as { mark: number }).mark,
    commitModelReply: (sessionId, id, end) => c.write(sessionId, () => commit()(sessionId, id, end)),
    installPin: (pin) =>
      c.write(pin.sessionId, () =>
        c.db.transaction((tx) => {
          const id = appendHeaderRecord(tx as never, { sessionId: pin.sessionId, type: "header_pin", digest: pin.digest, record: pin.record, atMs: pin.pinnedAtMs });
          markInstalled(tx as never, pin.sessionId, pin.frontierId, id, pin.installedAtMs);
          return id;
        }),
      ),
  };
}
