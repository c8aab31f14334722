import type pg from "pg";
import type { PgHostDb } from "../../db/pg-open";
import type { SessionFence } from "../api";
import { DEFAULT_RECONNECT, pgRead, pgTransaction, type PgTxDb, type ReconnectPolicy } from "./tx";

/** A handle statements run on: the pool (reads) or one transaction's connection. */
export type Q = PgHostDb | PgTxDb;

/** What every PostgreSQL family implementation runs on: the pool, drizzle over it, and the one fenced write path. */
export interface PgContext {
  readonly db: PgHostDb;
  readonly pool: pg.Pool;
  /** A read on the pool, asked again on a new connection when the connection dropped. */
  read<T>(fn: (db: PgHostDb) => Promise<T>): Promise<T>;
  /** Raw SQL rows (the statements SQLite keeps as raw SQL too), on the pool or a transaction's connection. */
  rows<R>(q: Q, text: string, values?: unknown[]): Promise<R[]>;
  /**
   * Write `sessionId`'s records: one transaction, fenced by the key the SessionFence gives (the
   * lease row locked FOR SHARE and checked first; LEASE_LOST and nothing written when it moved),
   * unfenced when it gives none. Retried whole across a dropped connection (tx.ts).
   */
  write<T>(sessionId: string, fn: (tx: PgTxDb) => Promise<T>): Promise<T>;
  /** A write that belongs to no one session (incidents, recovery of the whole host): one transaction, unfenced. */
  writeHost<T>(fn: (tx: PgTxDb) => Promise<T>): Promise<T>;
  /**
   * Inside a write: wait for any other transaction of the same session that also called this, as
   * SQLite's BEGIN IMMEDIATE makes a read-then-write (a wait's pending check, an intake) one at a time.
   */
  serialize(tx: PgTxDb, sessionId: string): Promise<void>;
}

/** The driver under a drizzle handle (drizzle() keeps it as `$client`): the pool, or one transaction's connection. */
const clientOf = (q: Q) => (q as unknown as { $client: pg.Pool | pg.PoolClient }).$client;

/** The context over one pool. */
export function pgContext(db: PgHostDb, pool: pg.Pool, fence: SessionFence, policy: ReconnectPolicy = DEFAULT_RECONNECT): PgContext {
  const rows = async <R>(q: Q, text: string, values: unknown[] = []): Promise<R[]> => (await clientOf(q).query(text, values)).rows as R[];
  return {
    db,
    pool,
    read: (fn) => pgRead(() => fn(db), policy),
    rows,
    write: (sessionId, fn) => pgTransaction(pool, fence.keyFor(sessionId), fn, policy),
    writeHost: (fn) => pgTransaction(pool, null, fn, policy),
    // Transaction-scoped: released at COMMIT or ROLLBACK, and with the connection if it drops.
    serialize: async (tx, sessionId) => void (await clientOf(tx).query("SELECT pg_advisory_xact_lock(hashtext($1))", [sessionId])),
  };
}
