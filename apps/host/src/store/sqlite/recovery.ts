import { recoverAfterCrash } from "../recovery";
import type { RecoveryStore } from "../api/recovery";
import type { SqliteContext } from "./context";

/** RecoveryStore over the synchronous SQLite recovery transaction. */
export function sqliteRecovery(c: SqliteContext): RecoveryStore {
  return {
    recoverAfterCrash: async (nowMs) => recoverAfterCrash(c.db, nowMs),
  };
}
