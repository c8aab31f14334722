import type Database from "better-sqlite3";
import type { HostDb } from "../../db/open";
import type { SessionFence } from "../api";
import { assertSqliteLease } from "../leases/sqlite";

/** What every SQLite family implementation runs on: the connection and the one fenced write path. */
export interface SqliteContext {
  readonly db: HostDb;
  readonly sqlite: Database.Database;
  /**
   * Run a write of `sessionId`'s records. Without a lease key (one host, no lease mode) it runs as
   * it always did; with one, the lease check and the write are one BEGIN IMMEDIATE transaction,
   * so a host that lost the session writes nothing (HostError LEASE_LOST).
   */
  write<T>(sessionId: string, fn: () => T): Promise<T>;
  /** As `write`, for a store call that is itself synchronous inside another store transaction. */
  writeSync<T>(sessionId: string, fn: () => T): T;
}

/**
 * The context over one connection. The fenced write is synchronous on purpose: better-sqlite3
 * runs the check and the statements with no await between them, so no other caller's statement
 * can land inside the transaction (an async body would let one in, and a rollback would take it).
 */
export function sqliteContext(db: HostDb, sqlite: Database.Database, fence: SessionFence): SqliteContext {
  const writeSync = <T>(sessionId: string, fn: () => T): T => {
    const key = fence.keyFor(sessionId);
    if (key === null) return fn();
    return sqlite
      .transaction(() => {
        assertSqliteLease(db, key);
        return fn();
      })
      .immediate();
  };
  return {
    db,
    sqlite,
    writeSync,
    write: async (sessionId, fn) => writeSync(sessionId, fn),
  };
}
