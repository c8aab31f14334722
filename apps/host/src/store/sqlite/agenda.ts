import { sessionAgenda } from "../agenda";
import type { AgendaStore } from "../api/agenda";
import type { SqliteContext } from "./context";

/** AgendaStore over the synchronous SQLite functions. */
export function sqliteAgenda(c: SqliteContext): AgendaStore {
  return {
    sessionAgenda: async (sessionId) => sessionAgenda(c.db, sessionId),
  };
}
