import type { LeaseStore } from "../../store/leases";

/** What the failover scan uses of the host. */
export interface FailoverScanDeps {
  store: LeaseStore<unknown>;
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

/** A host's fair share of `pending` sessions among `liveHosts` (itself included): rounded up, plus one. */
export function fairShare(pending: number, liveHosts: number): number {
  return Math.ceil(pending / Math.max(1, liveHosts)) + 1;
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

  /** One scan: the pending sessions claimable now, up to this host's share. Returns how many it claimed. */
  async once(): Promise<number> {
    const { store } = this.deps;
    const [overview, pending] = await Promise.all([store.overview(), store.pending(this.deps.now(), 10_000)]);
    if (pending.length === 0) return 0;
    const live = overview.hosts.filter((h) => overview.nowMs - h.heartbeatAtMs < this.deps.leaseMs).length;
    const share = fairShare(pending.length, live);
    let claimed = 0;
    for (const sessionId of pending) {
      if (this.stopped || claimed >= share) break;
      if (await this.deps.claim(sessionId)) claimed += 1;
    }
    return claimed;
  }
}
