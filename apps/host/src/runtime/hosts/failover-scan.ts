import type { LeaseStore } from "../../store/leases";

/** What the failover scan uses of the host. */
export interface FailoverScanDeps {
  store: LeaseStore<unknown>;
  /** This host (its live leases count against its share). */
  hostId: string;
  leaseMs: number;
  /** The host clock (wait deadlines are in it). */
  now(): number;
  /** Claim one session (resumed as a restart does); false when another host was first. */
  claim(sessionId: string): Promise<boolean>;
}

/** How often a host looks for sessions to take over: half a lease, at most every 2 s. */
export function scanEveryMs(leaseMs: number): number {
  return Math.max(50, Math.min(2_000, Math.floor(leaseMs / 2)));
}

/** Claims per batch: between batches the scan reads the leases again, so hosts scanning at once interleave. */
export const CLAIM_BATCH = 10;

/**
 * How many more of `pending` sessions this host may claim: the hosts' whole live load (`held`
 * by live hosts, plus what is pending) split evenly among `liveHosts` (itself included), rounded
 * up, plus one, less what it already holds (`mine`). Counting the load, not only what is pending,
 * keeps a host that already took its part from taking a second part of what is left.
 */
export function fairShare(pending: number, liveHosts: number, held = 0, mine = 0): number {
  return Math.max(0, Math.ceil((pending + held) / Math.max(1, liveHosts)) + 1 - mine);
}

/**
 * C21 failover: every few seconds (jittered, so hosts do not scan in step), the sessions with
 * pending work whose lease nobody holds live are claimed, at most this host's fair share per scan,
 * so the hosts that remain split a dead host's sessions between them.
 */
export class FailoverScan {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: FailoverScanDeps) {}

  /** Start scanning. */
  start(): void {
    if (this.stopped) return;
    const every = scanEveryMs(this.deps.leaseMs);
    this.timer = setTimeout(() => {
      void this.once()
        .catch(() => 0)
        .finally(() => this.start());
    }, every * (0.75 + Math.random() * 0.5));
    this.timer.unref();
  }

  /** Stop scanning (a scan under way finishes its claim in hand). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * One scan: the pending sessions claimable now, up to this host's share, in batches of
   * CLAIM_BATCH with the share counted again before each (other hosts claim meanwhile). Returns
   * how many it claimed.
   */
  async once(): Promise<number> {
    let claimed = 0;
    while (!this.stopped) {
      const batch = await this.batch();
      claimed += batch;
      if (batch < CLAIM_BATCH) break;
    }
    return claimed;
  }

  private async batch(): Promise<number> {
    const { store, hostId, leaseMs } = this.deps;
    const [overview, pending] = await Promise.all([store.overview(), store.pending(this.deps.now(), 10_000)]);
    if (pending.length === 0) return 0;
    const live = new Set(overview.hosts.filter((h) => overview.nowMs - h.heartbeatAtMs < leaseMs).map((h) => h.hostId));
    live.add(hostId);
    const held = overview.leases.filter((l) => live.has(l.hostId)).length;
    const mine = overview.leases.filter((l) => l.hostId === hostId).length;
    const share = Math.min(CLAIM_BATCH, fairShare(pending.length, live.size, held, mine));
    let claimed = 0;
    for (const sessionId of pending) {
      if (this.stopped || claimed >= share) break;
      if (await this.deps.claim(sessionId)) claimed += 1;
    }
    return claimed;
  }
}
