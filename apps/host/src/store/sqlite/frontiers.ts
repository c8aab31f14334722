import { recordFrontier, pendingFrontier, markInstalled, installedFrontier, getFrontier } from "../frontiers";
import type { FrontiersStore } from "../api/frontiers";
import type { SqliteContext } from "./context";

/** FrontiersStore over the synchronous SQLite functions. */
export function sqliteFrontiers(c: SqliteContext): FrontiersStore {
  return {
    recordFrontier: (row) => c.write(row.sessionId, () => recordFrontier(c.db, row)),
    pendingFrontier: async (sessionId) => pendingFrontier(c.db, sessionId),
    markInstalled: (sessionId, id, headerRecordId, atMs) => c.write(sessionId, () => markInstalled(c.db, sessionId, id, headerRecordId, atMs)),
    installedFrontier: async (sessionId) => installedFrontier(c.db, sessionId),
    getFrontier: async (id) => getFrontier(c.db, id),
  };
}
