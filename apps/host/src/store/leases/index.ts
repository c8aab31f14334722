/**
 * Host registration, session leases and the fenced write (C21): one API, two dialects.
 * `withLease(store, key, fn)` is the one path every session write takes once the store is async.
 */
import type { LeaseKey, LeaseStore } from "./types";

export { pgLeases, withPgLease, type PgTx } from "./pg";
export { sqliteLeases, withSqliteLease } from "./sqlite";
export { holds, isLeaseLost, leaseLost, LeaseLostError, type HostRecord, type Lease, type LeaseKey, type LeaseOverview, type LeaseRow, type LeaseStore } from "./types";

/** Run `fn`'s writes fenced by `key` (see LeaseStore.withLease): LEASE_LOST, and nothing written, unless `key` still holds the lease. */
export function withLease<Tx, T>(store: LeaseStore<Tx>, key: LeaseKey, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return store.withLease(key, fn);
}
