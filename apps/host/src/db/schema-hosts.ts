import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Hosts and session leases (C21) in SQLite. Embedded, one host holds every lease, but the tables
 * are the same as in PostgreSQL (pg-schema.ts) so the lease API and its fencing are one: a host
 * that a crash left half-alive on the same file is fenced off by the epoch like a remote one.
 */

/** Hosts sharing this database: each `serve` registers itself and heartbeats. */
export const hosts = sqliteTable("hosts", {
  hostId: text("host_id").primaryKey(),
  /** Where other hosts reach it to forward a client's request (null: not reachable). */
  address: text("address"),
  startedAtMs: integer("started_at_ms").notNull(),
  heartbeatAtMs: integer("heartbeat_at_ms").notNull(),
});

/** Session leases: the host that may write a session's records and the epoch its writes are fenced by (null host: released). */
export const leases = sqliteTable(
  "leases",
  {
    sessionId: text("session_id").primaryKey(),
    hostId: text("host_id"),
    epoch: integer("epoch").notNull(),
    expiresAtMs: integer("expires_at_ms").notNull(),
  },
  (t) => [index("leases_host").on(t.hostId), index("leases_expires").on(t.expiresAtMs)],
);
