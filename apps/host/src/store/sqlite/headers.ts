import { appendHeaderRecord, headerRows, latestPin, headerRecord, headerChain } from "../headers";
import { currentSources } from "../orientation";
import type { HeaderPlan, HeadersStore } from "../api/headers";
import type { SqliteContext } from "./context";

/** HeadersStore over the synchronous SQLite functions. */
export function sqliteHeaders(c: SqliteContext): HeadersStore {
  const planned = <T>(sessionId: string, plan: HeaderPlan<T>) =>
    plan(headerChain(c.db, sessionId), { global: currentSources(c.db, { kind: "global" }), own: currentSources(c.db, { kind: "session", session_id: sessionId }) });
  return {
    appendHeaderRecord: (row) => c.write(row.sessionId, () => appendHeaderRecord(c.db, row)),
    headerRows: async (sessionId, afterId) => headerRows(c.db, sessionId, afterId),
    latestPin: async (sessionId) => latestPin(c.db, sessionId),
    headerRecord: async (id) => headerRecord(c.db, id),
    headerChain: async (sessionId) => headerChain(c.db, sessionId),
    observeHeader: async (sessionId, plan, atMs) => {
      const seen = planned(sessionId, plan);
      if (seen.append === null) return seen.result;
      // Under the write (and the fence): read again, append what the plan asks of what is there now.
      return c.write(sessionId, () => {
        const { append, result } = planned(sessionId, plan);
        if (append !== null) appendHeaderRecord(c.db, { sessionId, ...append, atMs });
        return result;
      });
    },
  };
}
