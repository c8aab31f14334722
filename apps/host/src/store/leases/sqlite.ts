import type Database from "better-sqlite3";
import { and, asc, eq, gt, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import type { HostDb } from "../../db/open";
import { hosts, leases } from "../../db/schema";
import { serial, serialTransaction } from "../sqlite-serial";
import { pendingQuery } from "./pending";
import { holds, leaseLost, type HostRecord, type Lease, type LeaseKey, type LeaseRow, type LeaseStore } from "./types";

// The database's clock as in PostgreSQL (ms; unixepoch('subsec') needs SQLite 3.42, bundled is newer).
const NOW = sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

const leaseOf = (row: LeaseRow): Lease => ({ sessionId: row.sessionId, hostId: row.hostId!, epoch: row.epoch, expiresAtMs: row.expiresAtMs });

/**
 * The lease API over the embedded SQLite log: one host holds every lease, but a second process on
 * the same file (a host a crash left half-alive) is fenced off by the epoch the same way. Every
 * call runs on the connection's queue (sqlite-serial.ts), so none lands inside a fenced write's
 * open transaction. `db` must be the drizzle handle over `sqlite`.
 */
export function sqliteLeases(db: HostDb, sqlite: Database.Database): LeaseStore<HostDb> {
  const run = <T>(fn: () => T) => serial(sqlite, fn);
  return {
    dialect: "sqlite",
    register: (hostId, address) =>
      run(
        () =>
          db
            .insert(hosts)
            .values({ hostId, address, startedAtMs: NOW, heartbeatAtMs: NOW })
            .onConflictDoUpdate({ target: hosts.hostId, set: { address, startedAtMs: NOW, heartbeatAtMs: NOW } })
            .returning()
            .get() as HostRecord,
      ),
    heartbeat: (hostId) => run(() => db.update(hosts).set({ heartbeatAtMs: NOW }).where(eq(hosts.hostId, hostId)).run().changes === 1),
    hosts: () => run(() => db.select().from(hosts).orderBy(asc(hosts.startedAtMs), asc(hosts.hostId)).all()),
    lease: (sessionId) => run(() => (db.select().from(leases).where(eq(leases.sessionId, sessionId)).get() as LeaseRow | undefined) ?? null),
    claim: (sessionId, hostId, durationMs) =>
      run(() => {
        const expires = sql`${NOW} + ${Math.max(0, Math.floor(durationMs))}`;
        const row = db
          .insert(leases)
          .values({ sessionId, hostId, epoch: 1, expiresAtMs: expires })
          .onConflictDoUpdate({
            target: leases.sessionId,
            set: { hostId, epoch: sql`${leases.epoch} + 1`, expiresAtMs: expires },
            setWhere: or(isNull(leases.hostId), lte(leases.expiresAtMs, NOW)),
          })
          .returning()
          .get();
        return row ? leaseOf(row) : null;
      }),
    renew: (key, durationMs) =>
      run(() => {
        const row = db
          .update(leases)
          .set({ expiresAtMs: sql`${NOW} + ${Math.max(0, Math.floor(durationMs))}` })
          .where(and(eq(leases.sessionId, key.sessionId), eq(leases.hostId, key.hostId), eq(leases.epoch, key.epoch), gt(leases.expiresAtMs, NOW)))
          .returning()
          .get();
        return row ? leaseOf(row) : null;
      }),
    release: (key) =>
      run(
        () =>
          db
            .update(leases)
            .set({ hostId: null, expiresAtMs: 0 })
            .where(and(eq(leases.sessionId, key.sessionId), eq(leases.hostId, key.hostId), eq(leases.epoch, key.epoch)))
            .run().changes === 1,
      ),
    withLease: (key, fn) => withSqliteLease(db, sqlite, key, fn),
    overview: () =>
      run(() => {
        // One read transaction: the clock, the hosts and the leases are one instant's.
        const read = sqlite.transaction(() => {
          const nowMs = (db.get(sql`SELECT ${NOW} AS now`) as { now: number }).now;
          const all = db.select().from(hosts).orderBy(asc(hosts.startedAtMs), asc(hosts.hostId)).all();
          const live = db.select().from(leases).where(and(isNotNull(leases.hostId), gt(leases.expiresAtMs, nowMs))).orderBy(asc(leases.sessionId)).all();
          return { nowMs, hosts: all, leases: live.map(leaseOf) };
        });
        return read.deferred();
      }),
    pending: (nowMs, limit) => run(() => (db.all(pendingQuery(NOW, nowMs, limit)) as Array<{ session_id: string }>).map((r) => r.session_id)),
  };
}

/**
 * A fenced write in SQLite: BEGIN IMMEDIATE holds the file's write lock, so no claim (by this
 * process or another on the file) can come between the check and the commit. `fn`'s statements
 * run on `db` itself, which is inside the transaction while the queue holds the connection.
 */
export function withSqliteLease<T>(db: HostDb, sqlite: Database.Database, key: LeaseKey, fn: (tx: HostDb) => Promise<T>): Promise<T> {
  return serialTransaction(sqlite, async () => {
    assertSqliteLease(db, key);
    return fn(db);
  });
}

/** The fence check inside an open SQLite transaction: throws HostError LEASE_LOST unless `key` still holds the lease. */
export function assertSqliteLease(db: HostDb, key: LeaseKey): void {
  const row = db
    .select({ hostId: leases.hostId, epoch: leases.epoch, live: sql<boolean>`${leases.expiresAtMs} > ${NOW}`.mapWith(Boolean) })
    .from(leases)
    .where(eq(leases.sessionId, key.sessionId))
    .get();
  if (!holds(key, row)) throw leaseLost(key, row);
}
