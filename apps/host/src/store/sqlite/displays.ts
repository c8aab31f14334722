import { storeDisplay } from "../displays";
import type { DisplaysStore } from "../api/displays";
import type { SqliteContext } from "./context";

/** DisplaysStore over the synchronous SQLite functions. */
export function sqliteDisplays(c: SqliteContext): DisplaysStore {
  return {
    storeDisplay: (sessionId, executionId, display, listed, atMs) => c.write(sessionId, () => storeDisplay(c.db, executionId, display, listed, atMs)),
  };
}
