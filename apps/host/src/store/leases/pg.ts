import { and, asc, eq, gt, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import type { PgHostDb } from "../../db/pg-open";
import { hosts, leases } from "../../db/pg-schema";
import { pendingQuery } from "./pending";
import { holds, leaseLost, type HostRecord, type Lease, type LeaseKey, type LeaseRow, type LeaseStore } from "./types";

/** The transaction handle a fenced write's statements run on in PostgreSQL. */
export type PgTx = Parameters<Parameters<PgHostDb["transaction"]>[0]>[0];

// clock_timestamp, not now(): now() is the transaction's start, and a fenced write may have
// waited on the lease row's lock since then.
const NOW = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

const leaseOf = (row: { sessionId: string; hostId: string | null; epoch: number; expiresAtMs: number }): Lease => ({
  sessionId: row.sessionId,
  hostId: row.hostId!,
  epoch: row.epoch,
  expiresAtMs: row.expiresAtMs,
});

/** The lease API over PostgreSQL: many hosts, one database. */
export function pgLeases(db: PgHostDb): LeaseStore<PgTx> {
  return {
    dialect: "postgres",
    async register(hostId, address) {
      const [row] = await db
        .insert(hosts)
        .values({ hostId, address, startedAtMs: NOW, heartbeatAtMs: NOW })
        .onConflictDoUpdate({ target: hosts.hostId, set: { address, startedAtMs: NOW, heartbeatAtMs: NOW } })
        .returning();
      return row as HostRecord;
    },
    async heartbeat(hostId) {
      const rows = await db.update(hosts).set({ heartbeatAtMs: NOW }).where(eq(hosts.hostId, hostId)).returning({ hostId: hosts.hostId });
      return rows.length === 1;
    },
    hosts: () => db.select().from(hosts).orderBy(asc(hosts.startedAtMs), asc(hosts.hostId)),
    async lease(sessionId) {
      const [row] = await db.select().from(leases).where(eq(leases.sessionId, sessionId));
      return (row as LeaseRow | undefined) ?? null;
    },
    async claim(sessionId, hostId, durationMs) {
      const expires = sql`${NOW} + ${Math.max(0, Math.floor(durationMs))}`;
      // INSERT .. ON CONFLICT DO UPDATE .. WHERE is one atomic statement: of hosts racing, one
      // inserts or updates; the others wait on its row lock, then re-check the WHERE against the
      // row it committed (now held, not expired) and return nothing.
      const [row] = await db
        .insert(leases)
        .values({ sessionId, hostId, epoch: 1, expiresAtMs: expires })
        .onConflictDoUpdate({
          target: leases.sessionId,
          set: { hostId, epoch: sql`${leases.epoch} + 1`, expiresAtMs: expires },
          setWhere: or(isNull(leases.hostId), lte(leases.expiresAtMs, NOW)),
        })
        .returning();
      return row ? leaseOf(row) : null;
    },
    async renew(key, durationMs) {
      const [row] = await db
        .update(leases)
        .set({ expiresAtMs: sql`${NOW} + ${Math.max(0, Math.floor(durationMs))}` })
        .where(and(eq(leases.sessionId, key.sessionId), eq(leases.hostId, key.hostId), eq(leases.epoch, key.epoch), gt(leases.expiresAtMs, NOW)))
        .returning();
      return row ? leaseOf(row) : null;
    },
    async release(key) {
      const rows = await db
        .update(leases)
        .set({ hostId: null, expiresAtMs: 0 })
        .where(and(eq(leases.sessionId, key.sessionId), eq(leases.hostId, key.hostId), eq(leases.epoch, key.epoch)))
        .returning({ epoch: leases.epoch });
      return rows.length === 1;
    },
    withLease: (key, fn) => withPgLease(db, key, fn),
    overview: () =>
      // REPEATABLE READ: the clock, the hosts and the leases are one snapshot's.
      db.transaction(
        async (tx) => {
          const [clock] = await tx.execute<{ now: string }>(sql`SELECT ${NOW} AS now`).then((r) => r.rows);
          const nowMs = Number(clock!.now);
          const all = await tx.select().from(hosts).orderBy(asc(hosts.startedAtMs), asc(hosts.hostId));
          const live = await tx.select().from(leases).where(and(isNotNull(leases.hostId), gt(leases.expiresAtMs, nowMs))).orderBy(asc(leases.sessionId));
          return { nowMs, hosts: all as HostRecord[], leases: live.map(leaseOf) };
        },
        { isolationLevel: "repeatable read", accessMode: "read only" },
      ),
    pending: async (nowMs, limit) => (await db.execute<{ session_id: string }>(pendingQuery(NOW, nowMs, limit))).rows.map((r) => r.session_id),
  };
}

/**
 * A fenced write in PostgreSQL. Under READ COMMITTED a write guarded by `WHERE EXISTS (lease row)`
 * can still commit after another host took the lease; `FOR SHARE` on the lease row makes the
 * claim (which updates that row) wait until this transaction ends, so a write that passed the
 * check commits before any new holder's epoch exists, and the new holder reads it.
 */
export async function withPgLease<T>(db: PgHostDb, key: LeaseKey, fn: (tx: PgTx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ hostId: leases.hostId, epoch: leases.epoch, live: sql<boolean>`${leases.expiresAtMs} > ${NOW}` })
      .from(leases)
      .where(eq(leases.sessionId, key.sessionId))
      .for("share");
    if (!holds(key, row)) throw leaseLost(key, row);
    return fn(tx);
  });
}
