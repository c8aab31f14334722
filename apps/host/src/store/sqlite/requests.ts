import { recordRequest, recordReply, requestStep, closeUnansweredRequests } from "../requests";
import type { RequestsStore } from "../api/requests";
import type { SqliteContext } from "./context";

/** RequestsStore over the synchronous SQLite functions. */
export function sqliteRequests(c: SqliteContext): RequestsStore {
  return {
    recordRequest: (sessionId, row) => c.write(sessionId, () => recordRequest(c.db, row)),
    recordReply: (sessionId, id, reply, repliedAtMs) => c.write(sessionId, () => recordReply(c.db, id, reply, repliedAtMs)),
    requestStep: async (executionId, rowId) => requestStep(c.db, executionId, rowId),
    closeUnansweredRequests: async (nowMs) => closeUnansweredRequests(c.db, nowMs),
  };
}
