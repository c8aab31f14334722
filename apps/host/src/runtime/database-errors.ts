import type { HostOptions } from "./host-options";

/** When each host's options last told a connection error, so a restart of PostgreSQL is one line, not one per pooled connection. */
const lastTold = new WeakMap<object, number>();
const QUIET_MS = 5_000;

/**
 * A PostgreSQL connection that dropped while no query used it (the server restarted, the network
 * cut): nothing failed yet, the pool opens a new connection for the next query (store/pg/tx.ts
 * carries the statements over), so it is a warning on the daemon's log, at most one per 5 s.
 */
export function databaseConnectionError(options: Pick<HostOptions, "log">, error: Error): void {
  const now = Date.now();
  if (!options.log || now - (lastTold.get(options) ?? -Infinity) < QUIET_MS) return;
  lastTold.set(options, now);
  options.log("warn", "database_connection_lost", { error: error.message }, `a PostgreSQL connection dropped (${error.message}); the next statements reconnect`);
}
