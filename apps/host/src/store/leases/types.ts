import { HostError } from "../../errors";

/** What a session write is fenced by (C21): the host that holds the session's lease and the epoch it claimed. */
export interface LeaseKey {
  sessionId: string;
  hostId: string;
  epoch: number;
}

/** A held lease: its key and when it expires by the database's clock (epoch ms). */
export interface Lease extends LeaseKey {
  expiresAtMs: number;
}

/** A lease row as stored; `hostId` null when released. */
export interface LeaseRow {
  sessionId: string;
  hostId: string | null;
  epoch: number;
  expiresAtMs: number;
}

/** A registered host. */
export interface HostRecord {
  hostId: string;
  address: string | null;
  startedAtMs: number;
  heartbeatAtMs: number;
}

/**
 * Hosts and session leases over one database, the same for SQLite and PostgreSQL, async in both
 * so the store's async seam uses it unchanged. Times come from the database's clock, never a
 * host's, so hosts with skewed clocks agree on when a lease expired. `Tx` is the dialect's
 * transaction handle that a fenced write's statements run on.
 */
export interface LeaseStore<Tx> {
  readonly dialect: "sqlite" | "postgres";
  /** Register (or re-register after a restart) a host; its start and heartbeat are now. */
  register(hostId: string, address: string | null): Promise<HostRecord>;
  /** Record that the host is alive; false when it is not registered. */
  heartbeat(hostId: string): Promise<boolean>;
  /** Every registered host, oldest start first. */
  hosts(): Promise<HostRecord[]>;
  /** The lease row of a session, or null when it was never claimed. */
  lease(sessionId: string): Promise<LeaseRow | null>;
  /**
   * Claim a session for `hostId` for `durationMs`: one compare-and-swap statement that sets
   * `epoch = epoch + 1` only where the lease is free (released, or never claimed) or expired.
   * Null when another host holds it (the holder itself too: it renews instead).
   */
  claim(sessionId: string, hostId: string, durationMs: number): Promise<Lease | null>;
  /** Extend a lease still held by this host at this epoch and not yet expired; null when it is not. */
  renew(key: LeaseKey, durationMs: number): Promise<Lease | null>;
  /** Give a held lease up (the epoch stays, so it never matches again); false when it was not held so. */
  release(key: LeaseKey): Promise<boolean>;
  /**
   * Run `fn`'s writes in one transaction that first locks the lease row (PostgreSQL: `FOR SHARE`,
   * so a claim by another host waits for this commit) and checks that `key` still holds it and it
   * has not expired; otherwise nothing runs and it throws HostError `LEASE_LOST`.
   */
  withLease<T>(key: LeaseKey, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Every registered host and every live lease (held, not expired), with the database's clock read in the same query. */
  overview(): Promise<LeaseOverview>;
  /**
   * Up to `limit` sessions with pending work whose lease nobody holds live (released, expired or
   * never claimed): what a host's failover scan may claim. `nowMs` is the host clock wait deadlines use.
   */
  pending(nowMs: number, limit: number): Promise<string[]>;
}

/** What `klbr status` lists of the hosts sharing a database (see LeaseStore.overview). */
export interface LeaseOverview {
  /** The database's clock when it was read (epoch ms). */
  nowMs: number;
  hosts: HostRecord[];
  /** Live leases only, by session id. */
  leases: Lease[];
}

/** LEASE_LOST, carrying the key that lost, so whoever catches it knows which session to stop. */
export class LeaseLostError extends HostError {
  constructor(
    readonly key: LeaseKey,
    message: string,
  ) {
    super("LEASE_LOST", message);
  }
}

/** The LEASE_LOST error for a write under `key` that found `row` instead. */
export function leaseLost(key: LeaseKey, row: { hostId: string | null; epoch: number; live: boolean } | undefined): LeaseLostError {
  const found = !row ? "no lease at all" : row.hostId === null ? `released at epoch ${row.epoch}` : `held by ${row.hostId} at epoch ${row.epoch}${row.live ? "" : " (expired)"}`;
  return new LeaseLostError({ ...key }, `session ${key.sessionId}: a write under host ${key.hostId} epoch ${key.epoch} found ${found}; nothing was written`);
}

/** Whether the row lets `key` write: same host, same epoch, not expired. */
export function holds(key: LeaseKey, row: { hostId: string | null; epoch: number; live: boolean } | undefined): boolean {
  return row !== undefined && row.hostId === key.hostId && row.epoch === key.epoch && row.live;
}

/** Whether an error is a fenced write's LEASE_LOST. */
export function isLeaseLost(error: unknown): boolean {
  return error instanceof HostError && error.code === "LEASE_LOST";
}
