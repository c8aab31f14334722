import { failModelRequest, closeRunningModelRequests, sessionModelRequests } from "../model-requests";
import type { ModelRequestsStore } from "../api/model-requests";
import type { SqliteContext } from "./context";
import { turnStatements } from "../turn-statements";

/** ModelRequestsStore over the synchronous SQLite functions. */
export function sqliteModelRequests(c: SqliteContext): ModelRequestsStore {
  // The two statements every model step runs are prepared once (store/turn-statements.ts).
  const st = () => turnStatements(c.sqlite);
  return {
    startModelRequest: (row) =>
      c.write(row.sessionId, () => {
        st().startRequest.run({ ...row, profile: JSON.stringify(row.profile), frontierId: row.frontierId ?? null });
      }),
    finishModelRequest: (sessionId, id, end) =>
      c.write(sessionId, () => {
        st().finishRequest.run({ id, reply: JSON.stringify(end.reply), responseModel: end.responseModel ?? null, usage: end.usage === null ? null : JSON.stringify(end.usage), retries: end.retries, endedAtMs: end.endedAtMs });
      }),
    failModelRequest: (sessionId, id, end) => c.write(sessionId, () => failModelRequest(c.db, id, end)),
    closeRunningModelRequests: async (nowMs) => closeRunningModelRequests(c.db, nowMs),
    sessionModelRequests: async (sessionId) => sessionModelRequests(c.db, sessionId),
  };
}
