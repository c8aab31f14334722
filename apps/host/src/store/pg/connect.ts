import { migratePostgres, openPostgres, type PgHost, type PgOpenOptions } from "../../db/pg-open";
import type { DatabaseChoice } from "../../db/database-url";
import { HostError } from "../../errors";
import { pgRead, type ReconnectPolicy } from "./tx";

/** How long a starting host waits for PostgreSQL (a server still starting, as in a compose file) before DATABASE_UNAVAILABLE. */
export const START_WAIT: ReconnectPolicy = { deadlineMs: 5_000, pauseMs: 50, maxPauseMs: 500 };

/**
 * Open the pool of `choice` and apply the migrations under the advisory lock (pg-open.ts), as a
 * host does at start. A server that does not answer within `wait`, refuses the login, or has no
 * such database is DATABASE_UNAVAILABLE naming the URL (its password hidden) and what PostgreSQL
 * said; the pool is closed then, so a failed start leaves no connection behind.
 */
export async function connectPostgres(choice: Extract<DatabaseChoice, { kind: "postgres" }>, options: PgOpenOptions & { wait?: ReconnectPolicy } = {}): Promise<PgHost> {
  const host = openPostgres(choice.url, options);
  try {
    await migrateAtStart(host, choice.shown, options.wait);
    return host;
  } catch (error) {
    await host.close().catch(() => {});
    throw error;
  }
}

/**
 * The start's migrations on an open pool (the advisory lock, waiting up to `wait` for a server
 * still starting); what fails is DATABASE_UNAVAILABLE naming `shown`. The pool stays the caller's.
 */
export async function migrateAtStart(host: Pick<PgHost, "pool">, shown: string, wait: ReconnectPolicy = START_WAIT): Promise<void> {
  try {
    // The migrations run in one transaction: a connection cut in the middle applied none of it.
    await pgRead(() => migratePostgres(host.pool), wait);
  } catch (error) {
    throw cannotUse(shown, error);
  }
}

/**
 * Open a pool on `choice` for a reader (`klbr log`, `klbr web`, `klbr display get`): no migrations
 * (a reader never changes the schema), but the first connection made now, so a server that does
 * not answer is DATABASE_UNAVAILABLE at once, and a database no host has migrated is
 * HOST_NOT_RUNNING rather than a missing relation later.
 */
export async function readPostgres(choice: Extract<DatabaseChoice, { kind: "postgres" }>, options: PgOpenOptions & { wait?: ReconnectPolicy } = {}): Promise<PgHost> {
  const host = openPostgres(choice.url, options);
  let migrated: boolean;
  try {
    const { rows } = await pgRead(() => host.pool.query<{ events: string | null }>("SELECT to_regclass('events')::text AS events"), options.wait ?? START_WAIT);
    migrated = rows[0]?.events != null;
  } catch (error) {
    await host.close().catch(() => {});
    throw cannotUse(choice.shown, error);
  }
  if (!migrated) {
    await host.close();
    throw new HostError("HOST_NOT_RUNNING", `no klbr records in ${choice.shown}; start \`klbr serve --database\` on it first`);
  }
  return host;
}

function cannotUse(shown: string, error: unknown): HostError {
  const e = error as { code?: unknown; message?: string; cause?: { message?: string; code?: unknown } };
  const inner = e instanceof HostError && e.code === "DATABASE_UNAVAILABLE" && e.cause ? e.cause : e;
  const state = typeof inner.code === "string" && /^[0-9A-Z]{5}$/.test(inner.code) ? ` (SQLSTATE ${inner.code})` : typeof inner.code === "string" ? ` (${inner.code})` : "";
  const wrapped = new HostError("DATABASE_UNAVAILABLE", `cannot use PostgreSQL at ${shown}: ${inner.message ?? String(inner)}${state}`);
  (wrapped as { cause?: unknown }).cause = error;
  return wrapped;
}
