import { recoverSession } from "../failover";
import { recoverAfterCrash } from "../recovery";
import type { RecoveryStore } from "../api/recovery";
import type { SqliteContext } from "./context";

/** RecoveryStore over the synchronous SQLite recovery transaction. */
export function sqliteRecovery(c: SqliteContext): RecoveryStore {
  return {
    recoverAfterCrash: async (nowMs) => recoverAfterCrash(c.db, nowMs),
    // Unfenced, as it always ran: the caller claimed the session's new lease just before.
    recoverSession: async (sessionId, previous, reason, nowMs) => recoverSession(c.db, sessionId, previous, reason, nowMs),
  };
}
