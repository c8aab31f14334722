import { join } from "node:path";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { hostPackageRoot } from "../paths";
import * as pgSchema from "./pg-schema";

/** The host's drizzle handle over PostgreSQL (C21). */
export type PgHostDb = NodePgDatabase<typeof pgSchema>;

/** An open PostgreSQL store: the pool (ended by `close`) and the drizzle handle over it. */
export interface PgHost {
  readonly pool: pg.Pool;
  readonly db: PgHostDb;
  close(): Promise<void>;
}

/** The host's migrations table, as in SQLite, in the public schema. */
export const PG_MIGRATIONS = { table: "__klbr_host_migrations", schema: "public" } as const;

/**
 * The advisory lock every host takes around its migrations: ("klbr" as an int4, 1). drizzle's
 * migrator reads the last applied migration outside its transaction, so two hosts starting at once
 * would both apply everything; the lock makes the second wait, then find nothing to do.
 */
export const MIGRATION_LOCK: readonly [number, number] = [0x6b6c6272, 1];

/** Where the host's PostgreSQL migrations live (drizzle-kit, `pnpm db:generate:pg`). */
export function pgMigrationsFolder(): string {
  return join(hostPackageRoot(), "drizzle-pg");
}

/**
 * int8 (bigint, count(*)) as a JS number, as SQLite's integers are: every bigint column holds ms
 * timestamps, byte counts or ids, far below 2^53. Per pool, not pg's global parser table.
 */
const HOST_TYPES = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === 20 && format !== "binary" ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as "text"))) as typeof pg.types.getTypeParser,
};

/** Settings of the pool a host opens. */
export interface PgOpenOptions {
  /** Connections at most (default 10). */
  max?: number;
  /** Where connection errors that no query is waiting on are reported (default: ignored). */
  onError?: (error: Error) => void;
  /** Give up opening one connection after this long (default 10 s): a server that never answers is a connection error, not a hang. */
  connectTimeoutMs?: number;
}

/**
 * Open a pool on `url` (`postgres://...`, a `?host=/dir` socket too). node-postgres emits `error`
 * on a client whose connection drops (PostgreSQL restarted, the network cut): with no listener
 * that is an uncaught exception that kills the host. The pool listens for idle clients; every
 * client also gets a listener of its own for while it is checked out, where the waiting query
 * rejects anyway. A broken client is never reused: pg-pool drops a released client that is no
 * longer queryable, so the next checkout opens a fresh connection.
 */
export function openPostgres(url: string, options: PgOpenOptions = {}): PgHost {
  const report = options.onError ?? (() => {});
  // keepAlive: a connection whose server vanished without a FIN (a host or network gone) is found dead by the kernel, not never.
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000, keepAlive: true, types: HOST_TYPES });
  pool.on("error", report);
  pool.on("connect", (client) => client.on("error", report));
  const db = drizzle(pool, { schema: pgSchema });
  return { pool, db, close: () => pool.end() };
}

/** Apply the host's PostgreSQL migrations under the advisory lock, on one connection of the pool. */
export async function migratePostgres(pool: pg.Pool, folder = pgMigrationsFolder()): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // Session-level: if this host dies holding it, PostgreSQL releases it with the connection.
    await client.query("SELECT pg_advisory_lock($1, $2)", [...MIGRATION_LOCK]);
    try {
      await migrate(drizzle(client), { migrationsFolder: folder, migrationsTable: PG_MIGRATIONS.table, migrationsSchema: PG_MIGRATIONS.schema });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, $2)", [...MIGRATION_LOCK]);
    }
  } catch (error) {
    broken = error as Error;
    throw error;
  } finally {
    client.release(broken);
  }
}

/** SQLSTATE classes and node-postgres messages that mean the connection, not the statement, failed. */
const CONNECTION_STATES = new Set(["57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOENT", "EPIPE"]);

/**
 * Whether an error says the connection went away (server restarted or shut down, socket gone), so
 * the statement may be retried on a fresh connection when it is idempotent. A COMMIT cut off this
 * way has an unknown outcome: a caller retrying a write must make it idempotent first.
 */
export function isConnectionError(error: unknown): boolean {
  // drizzle wraps the driver's error (DrizzleQueryError "Failed query: ..."), keeping it as `cause`.
  for (let e = error as { code?: string; message?: string; cause?: unknown } | null, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code && (CONNECTION_STATES.has(e.code) || SOCKET_CODES.has(e.code))) return true;
    if (/Connection terminated|not queryable|terminating connection|timeout exceeded when trying to connect/i.test(e.message ?? "")) return true;
  }
  return false;
}
