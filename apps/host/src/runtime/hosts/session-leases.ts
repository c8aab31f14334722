import { performance } from "node:perf_hooks";
import { HostError } from "../../errors";
import type { Lease, LeaseKey, LeaseRow, LeaseStore } from "../../store/leases";

/** Why a host stopped a session it held (the log line says which). */
export type LossReason = "lease_lost" | "renew_refused" | "renew_deadline";

/** What the session leases use of the host. */
export interface SessionLeasesDeps {
  store: LeaseStore<unknown>;
  hostId: string;
  /** How long a claim or a renewal lasts (`--lease`, default 10 s). */
  leaseMs: number;
  /**
   * Stop the session on this host at once: its turn, its running cell, its workbench tree. Called
   * once per loss; from then on the session's writes carry the lost key, which never matches again.
   */
  stop(sessionId: string, why: LossReason, detail: string): void;
  /**
   * A claim found the lease last held by a host (another one, or an earlier process of this one)
   * that did not release it: resume the session as a restart does, before anything else runs for it.
   */
  resume?(lease: Lease, previous: LeaseRow): Promise<void>;
  /** A monotonic clock in ms (tests); default performance.now. */
  clock?: () => number;
}

interface Held {
  key: LeaseKey;
  /** Local monotonic instant by which this host must have stopped the session unless a renewal lands first. */
  deadline: number;
  timer: NodeJS.Timeout | null;
  renewing: boolean;
}

/** How often leases are renewed: every 2 s (C21), more often for a lease under 10 s (a fifth of it). */
export function renewEveryMs(leaseMs: number): number {
  return Math.max(50, Math.min(2_000, Math.floor(leaseMs / 5)));
}

/**
 * How long before a lease can expire elsewhere this host stops a session it could not renew: a
 * quarter of the lease (2.5 s of 10 s), so a renewal every fifth of it has three tries first.
 */
export function killMarginMs(leaseMs: number): number {
  return Math.floor(leaseMs / 4);
}

/**
 * This host's session leases (C21): claimed before the host does anything for a session, renewed
 * on a timer, and given up at a clean stop. It is the store's SessionFence: `keyFor` gives the key a
 * session's writes are fenced by. A lease that cannot be renewed has a deadline timer, set from the
 * instant its last claim or renewal was sent (the database starts the lease no earlier than that),
 * that stops the session before the lease can expire and another host claim it.
 */
export class SessionLeases {
  private readonly held = new Map<string, Held>();
  /** Keys this host lost: a write that still comes for the session carries it and is refused. */
  private readonly lost = new Map<string, LeaseKey>();
  private readonly claiming = new Map<string, Promise<LeaseKey>>();
  private readonly clock: () => number;
  private renewTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: SessionLeasesDeps) {
    this.clock = deps.clock ?? (() => performance.now());
  }

  /** This host's id. */
  get hostId(): string {
    return this.deps.hostId;
  }

  /** The lease duration in ms. */
  get leaseMs(): number {
    return this.deps.leaseMs;
  }

  /** Start renewing what is held. */
  start(): void {
    if (this.renewTimer || this.stopped) return;
    this.renewTimer = setInterval(() => void this.renewAll(), renewEveryMs(this.deps.leaseMs));
    this.renewTimer.unref();
  }

  /**
   * The key a write of `sessionId`'s records is fenced by: the held lease's, the lost key (the write
   * is refused with LEASE_LOST), or null for a session this host never held (written as without leases).
   */
  keyFor(sessionId: string): LeaseKey | null {
    const held = this.held.get(sessionId);
    // A host whose event loop stood still (SIGSTOP, a long pause) may run I/O callbacks before
    // its timers: the deadline is checked here too, so no write leaves after it passed.
    if (held && this.clock() >= held.deadline) this.lose(sessionId, "renew_deadline", `no renewal landed within ${this.deps.leaseMs - killMarginMs(this.deps.leaseMs)} ms`);
    return this.held.get(sessionId)?.key ?? this.lost.get(sessionId) ?? null;
  }

  /** Whether this host holds the session's lease now. */
  holds(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  /** The sessions this host holds. */
  sessions(): string[] {
    return [...this.held.keys()];
  }

  /**
   * The session's lease, claimed when this host does not hold it (resumed first when a host that
   * did not release it held it last). SESSION_HELD_ELSEWHERE, naming the holder, when another
   * live host holds it.
   */
  async hold(sessionId: string): Promise<LeaseKey> {
    const held = this.held.get(sessionId);
    if (held) return held.key;
    let claiming = this.claiming.get(sessionId);
    if (!claiming) {
      claiming = this.claim(sessionId).finally(() => this.claiming.delete(sessionId));
      this.claiming.set(sessionId, claiming);
    }
    return claiming;
  }

  /** As hold, but null instead of SESSION_HELD_ELSEWHERE (a scan that only takes what is free). */
  async tryHold(sessionId: string): Promise<LeaseKey | null> {
    try {
      return await this.hold(sessionId);
    } catch (error) {
      if (error instanceof HostError && error.code === "SESSION_HELD_ELSEWHERE") return null;
      throw error;
    }
  }

  /** A fenced write found the lease gone (LEASE_LOST): stop the session here, once. */
  lostBy(key: LeaseKey, detail: string): void {
    const held = this.held.get(key.sessionId);
    if (held && held.key.epoch === key.epoch) this.lose(key.sessionId, "lease_lost", detail);
  }

  /** Stop renewing and give every lease up (a clean stop: another host may claim them at once). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    const keys = [...this.held.values()].map((h) => (h.timer && clearTimeout(h.timer), h.key));
    this.held.clear();
    await Promise.allSettled(keys.map((key) => this.deps.store.release(key)));
  }

  private async claim(sessionId: string): Promise<LeaseKey> {
    if (this.stopped) throw new HostError("HOST_STOPPING", `the host is stopping; session ${sessionId} is not claimed`);
    const { store, hostId, leaseMs } = this.deps;
    const previous = await store.lease(sessionId);
    const sent = this.clock();
    let lease = await store.claim(sessionId, hostId, leaseMs);
    if (!lease && previous?.hostId === hostId && !this.held.has(sessionId)) {
      // An earlier process of this host (same data directory, whose lock proves it is gone) or a
      // lease this process gave up for lost: this host takes it back now, at a new epoch.
      if (await store.release({ sessionId, hostId, epoch: previous.epoch })) lease = await store.claim(sessionId, hostId, leaseMs);
    }
    if (!lease) throw await this.heldElsewhere(sessionId);
    const key: LeaseKey = { sessionId, hostId, epoch: lease.epoch };
    if (previous && previous.hostId !== null && this.deps.resume) {
      try {
        await this.deps.resume(lease, previous);
      } catch (error) {
        await store.release(key).catch(() => false);
        throw error;
      }
    }
    if (this.stopped) {
      // The host began to stop while this claim ran: nothing will run for the session here.
      await store.release(key).catch(() => false);
      throw new HostError("HOST_STOPPING", `the host is stopping; session ${sessionId} is not claimed`);
    }
    this.lost.delete(sessionId);
    this.held.set(sessionId, { key, deadline: 0, timer: null, renewing: false });
    this.arm(sessionId, sent);
    return key;
  }

  private async heldElsewhere(sessionId: string): Promise<HostError> {
    const row = await this.deps.store.lease(sessionId);
    const holder = row?.hostId ?? "another host";
    const host = row?.hostId ? (await this.deps.store.hosts()).find((h) => h.hostId === row.hostId) : undefined;
    const at = host?.address ? ` (${host.address})` : "";
    return new HostError("SESSION_HELD_ELSEWHERE", `session ${sessionId} is held by host ${holder}${at} at epoch ${row?.epoch ?? "?"}; ask that host, or retry once its lease expires`);
  }

  /** (Re)set the session's deadline from the instant its last successful claim or renewal was sent. */
  private arm(sessionId: string, sentAt: number): void {
    const held = this.held.get(sessionId);
    if (!held) return;
    if (held.timer) clearTimeout(held.timer);
    held.deadline = sentAt + this.deps.leaseMs - killMarginMs(this.deps.leaseMs);
    held.timer = setTimeout(() => {
      if (this.held.get(sessionId) === held) this.lose(sessionId, "renew_deadline", `no renewal landed within ${this.deps.leaseMs - killMarginMs(this.deps.leaseMs)} ms`);
    }, Math.max(0, held.deadline - this.clock()));
    held.timer.unref();
  }

  private async renewAll(): Promise<void> {
    await Promise.all([...this.held.entries()].map(([sessionId, held]) => this.renew(sessionId, held)));
  }

  private async renew(sessionId: string, held: Held): Promise<void> {
    if (held.renewing) return;
    held.renewing = true;
    const sent = this.clock();
    try {
      const lease = await this.deps.store.renew(held.key, this.deps.leaseMs);
      if (this.held.get(sessionId) !== held) return;
      if (lease) this.arm(sessionId, sent);
      else this.lose(sessionId, "renew_refused", `the lease at epoch ${held.key.epoch} was no longer this host's`);
    } catch {
      // The database is unreachable: the deadline timer stops the session if no renewal lands in time.
    } finally {
      held.renewing = false;
    }
  }

  private lose(sessionId: string, why: LossReason, detail: string): void {
    const held = this.held.get(sessionId);
    if (!held) return;
    if (held.timer) clearTimeout(held.timer);
    this.held.delete(sessionId);
    this.lost.set(sessionId, held.key);
    this.deps.stop(sessionId, why, detail);
  }
}
