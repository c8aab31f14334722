import { appendHeaderRecord, headerRows, latestPin, headerRecord, headerChain } from "../headers";
import type { HeadersStore } from "../api/headers";
import type { SqliteContext } from "./context";

/** HeadersStore over the synchronous SQLite functions. */
export function sqliteHeaders(c: SqliteContext): HeadersStore {
  return {
    appendHeaderRecord: (row) => c.write(row.sessionId, () => appendHeaderRecord(c.db, row)),
    headerRows: async (sessionId, afterId) => headerRows(c.db, sessionId, afterId),
    latestPin: async (sessionId) => latestPin(c.db, sessionId),
    headerRecord: async (id) => headerRecord(c.db, id),
    headerChain: async (sessionId) => headerChain(c.db, sessionId),
  };
}
