import type { LeaseOverview, LeaseStore } from "../../store/leases";

/** How often a host says it is alive (C21). */
export const HEARTBEAT_MS = 2_000;

/** One host as `klbr status` lists it. */
export interface HostView {
  host_id: string;
  /** Where other hosts reach it (its control socket on one machine), or null. */
  address: string | null;
  started_at_ms: number;
  /** Its last heartbeat, by the database's clock. */
  heartbeat_at_ms: number;
  /** Whether its last heartbeat is more recent than one lease duration. */
  alive: boolean;
  /** Whether it is the host that answered. */
  this_host: boolean;
  /** The sessions it holds a live lease of, by id. */
  sessions: string[];
}

/** What `klbr status` adds about the hosts sharing the database. */
export interface HostsStatus {
  host_id: string;
  lease_ms: number;
  hosts: HostView[];
}

/** The hosts as `klbr status` shows them, from one overview read. */
export function hostsView(overview: LeaseOverview, self: string, leaseMs: number): HostView[] {
  const held = new Map<string, string[]>();
  for (const lease of overview.leases) held.set(lease.hostId, [...(held.get(lease.hostId) ?? []), lease.sessionId]);
  return overview.hosts.map((h) => ({
    host_id: h.hostId,
    address: h.address,
    started_at_ms: h.startedAtMs,
    heartbeat_at_ms: h.heartbeatAtMs,
    alive: overview.nowMs - h.heartbeatAtMs < leaseMs,
    this_host: h.hostId === self,
    sessions: held.get(h.hostId) ?? [],
  }));
}

/**
 * This host in the database's host list (C21): registered at start with the address other hosts
 * reach it by, then a heartbeat every 2 s. A failed heartbeat (the database away) is only retried:
 * what keeps a host from acting for a session it lost is its leases, not its heartbeat.
 */
export class HostRegistry {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: LeaseStore<unknown>,
    readonly hostId: string,
    private readonly address: string | null,
    private readonly leaseMs: number,
  ) {}

  /** Register and start the heartbeat. */
  async start(): Promise<void> {
    await this.store.register(this.hostId, this.address);
    this.timer = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** Stop the heartbeat. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The hosts sharing the database, with the sessions each holds. */
  async status(): Promise<HostsStatus> {
    return { host_id: this.hostId, lease_ms: this.leaseMs, hosts: hostsView(await this.store.overview(), this.hostId, this.leaseMs) };
  }

  private async beat(): Promise<void> {
    try {
      // A row gone (an operator cleaned the table) is put back: the host is still here.
      if (!(await this.store.heartbeat(this.hostId))) await this.store.register(this.hostId, this.address);
    } catch {
      /* the database is away; the next beat tries again */
    }
  }
}
