import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type { PgHostDb } from "../../db/pg-open";
import * as pgSchema from "../../db/pg-schema";
import { isConnectionError } from "../../db/pg-open";
import { HostError } from "../../errors";
import { holds, leaseLost, type LeaseKey } from "../leases/types";

/**
 * How long a statement keeps being retried while PostgreSQL is unreachable (a restart, a failover
 * of the server), and how long it waits between tries. Past the deadline: DATABASE_UNAVAILABLE.
 */
export interface ReconnectPolicy {
  /** Give up after this long without a working connection (default 30 s). */
  deadlineMs: number;
  /** First pause between tries; doubled each try up to `maxPauseMs`. */
  pauseMs: number;
  maxPauseMs: number;
}

/** The default: a `pg_ctl restart` takes about a second; a server that is gone 30 s is an outage. */
export const DEFAULT_RECONNECT: ReconnectPolicy = { deadlineMs: 30_000, pauseMs: 25, maxPauseMs: 1_000 };

/** What a transaction runs on: one connection, drizzle over it (the same query builder as the pool's). */
export type PgTxDb = PgHostDb;

// drizzle over one checked-out client, made once per client: pg-pool hands the same Client objects
// out again until one breaks, and building drizzle (its schema's relational config) per
// transaction would cost more than the statements it runs.
const boundDb = new WeakMap<pg.PoolClient, PgTxDb>();
const dbOf = (client: pg.PoolClient): PgTxDb => {
  let db = boundDb.get(client);
  if (!db) boundDb.set(client, (db = drizzle(client, { schema: pgSchema })));
  return db;
};

const NOW_SQL = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * BEGIN and the transaction's first statement in one round trip (the simple-query protocol takes
 * several statements without parameters; the session id is a literal escaped by the driver).
 * txid_current() names the transaction, so a COMMIT whose reply the connection lost can be looked
 * up afterwards (txid_status) instead of guessed. With a key, the lease row is locked FOR SHARE:
 * a claim by another host (an update of that row) waits for this transaction to end (leases/pg.ts).
 */
function beginSql(client: pg.PoolClient, key: LeaseKey | null): string {
  if (key === null) return "BEGIN; SELECT txid_current()::text AS xid";
  return `BEGIN; SELECT txid_current()::text AS xid, l.host_id, l.epoch, l.expires_at_ms > ${NOW_SQL} AS live FROM (SELECT 1) AS one LEFT JOIN (SELECT * FROM leases WHERE session_id = ${client.escapeLiteral(key.sessionId)} FOR SHARE) AS l ON true`;
}

type BeginRow = { xid: string; host_id?: string | null; epoch?: string | number | null; live?: boolean | null };

class Cut extends Error {
  constructor(
    override readonly cause: unknown,
    /** Set once COMMIT was sent: the transaction's id, whose outcome must be looked up. */
    readonly committing: { xid: string; value: unknown } | null,
  ) {
    super("connection lost");
  }
}

/** One attempt: BEGIN (+ check), the body, COMMIT; a connection lost on the way is a Cut. */
async function attempt<T>(pool: pg.Pool, key: LeaseKey | null, fn: (tx: PgTxDb) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    if (isConnectionError(error)) throw new Cut(error, null);
    throw error;
  }
  let xid: string | null = null;
  let value: { v: T } | null = null;
  let broken: Error | undefined;
  try {
    const results = (await client.query(beginSql(client, key))) as unknown as pg.QueryResult[];
    const row = results[1]!.rows[0] as BeginRow;
    xid = row.xid;
    if (key !== null) {
      const lease = row.host_id === null || row.host_id === undefined ? undefined : { hostId: row.host_id, epoch: Number(row.epoch), live: row.live === true };
      if (!holds(key, lease)) throw leaseLost(key, lease);
    }
    value = { v: await fn(dbOf(client)) };
    await client.query("COMMIT");
    return value.v;
  } catch (error) {
    if (isConnectionError(error)) {
      broken = error as Error;
      throw new Cut(error, value && xid ? { xid, value: value.v } : null);
    }
    try {
      await client.query("ROLLBACK");
    } catch (rollback) {
      broken = rollback as Error;
    }
    throw error;
  } finally {
    // A client whose connection failed is destroyed, not pooled again.
    client.release(broken);
  }
}

/** What became of a transaction whose COMMIT got no reply: `committed`, `aborted`, or `in progress`. */
async function outcome(pool: pg.Pool, xid: string): Promise<string | null> {
  const { rows } = await pool.query<{ status: string | null }>("SELECT txid_status($1::bigint) AS status", [xid]);
  return rows[0]?.status ?? null;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function unavailable(cause: unknown, policy: ReconnectPolicy): HostError {
  const error = new HostError("DATABASE_UNAVAILABLE", `PostgreSQL did not answer for ${Math.round(policy.deadlineMs / 1000)} s: ${(cause as Error)?.message ?? String(cause)}`);
  (error as { cause?: unknown }).cause = cause;
  return error;
}

/**
 * Run `fn`'s statements as one transaction on one connection (fenced by `key` when given: LEASE_LOST
 * and nothing written unless the key still holds the lease). When the connection drops, PostgreSQL
 * rolls back whatever it had not committed, so the whole transaction is run again on a new
 * connection, until `policy.deadlineMs`, then DATABASE_UNAVAILABLE. The one case that is not
 * simply retried is a COMMIT that got no reply: its transaction id says whether it committed
 * (then its result stands and nothing runs twice) or not (then it runs again). `fn` must only
 * run statements on the handle it is given: it may run more than once, but commits once.
 */
export async function pgTransaction<T>(pool: pg.Pool, key: LeaseKey | null, fn: (tx: PgTxDb) => Promise<T>, policy: ReconnectPolicy = DEFAULT_RECONNECT): Promise<T> {
  const deadline = Date.now() + policy.deadlineMs;
  let wait = policy.pauseMs;
  let pending: { xid: string; value: unknown } | null = null;
  for (;;) {
    try {
      if (pending) {
        const status = await outcome(pool, pending.xid);
        if (status === "committed") return pending.value as T;
        // "in progress": the old backend has not seen its connection go yet; ask again shortly.
        if (status !== "in progress") pending = null;
        else throw new Cut(new Error(`transaction ${pending.xid} still in progress`), pending);
      }
      if (!pending) return await attempt(pool, key, fn);
    } catch (error) {
      const cut: Cut | null = error instanceof Cut ? error : isConnectionError(error) ? new Cut(error, pending) : null;
      if (!cut) throw error;
      if (cut.committing) pending = cut.committing;
      if (Date.now() + wait > deadline) throw unavailable(cut.cause, policy);
    }
    await pause(wait);
    wait = Math.min(wait * 2, policy.maxPauseMs);
  }
}

/** Run a read (no writes) on the pool, again on a new connection when the connection dropped, until the deadline. */
export async function pgRead<T>(fn: () => Promise<T>, policy: ReconnectPolicy = DEFAULT_RECONNECT): Promise<T> {
  const deadline = Date.now() + policy.deadlineMs;
  let wait = policy.pauseMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      if (Date.now() + wait > deadline) throw unavailable(error, policy);
    }
    await pause(wait);
    wait = Math.min(wait * 2, policy.maxPauseMs);
  }
}
