import { HostError } from "../../errors";
import type { Store } from "../../store/api";
import { LeaseLostError, type Lease, type LeaseKey, type LeaseRow, type LeaseStore } from "../../store/leases";
import { FailoverScan } from "./failover-scan";
import { HostRegistry, type HostsStatus } from "./registry";
import { SessionLeases, type LossReason } from "./session-leases";

/** A line for the daemon's log (stderr): a lost session writes nothing more to the database, so its story goes here. */
export type LeaseLog = (level: "info" | "warn" | "error", event: string, fields: Record<string, unknown>, text: string) => void;

/** What the host's leasing uses of the host. */
export interface HostLeasingDeps {
  store: LeaseStore<unknown>;
  /** The log a takeover closes the previous holder's leftovers in. */
  records: Pick<Store, "recoverSession">;
  hostId: string;
  /** Where other hosts reach this one (its control socket). */
  address: string | null;
  leaseMs: number;
  now(): number;
  log: LeaseLog;
  /** The session's workbench on this host, if any: its tree is what a loss kills. */
  workbench(sessionId: string): { endedFor: string | null; worker: { state: string; hardStop(reason: string): Promise<unknown> } | null } | undefined;
  /** The session's next generation starts for `reason` (kernel.reset), its namespace being gone. */
  markEnded(sessionId: string, reason: string): void;
  /** After a takeover: the session's wait and deferred-input timers again, and a turn when one is due. */
  resumeWork(sessionId: string): void;
}

/**
 * Many hosts, one log (C21), for one host: its registration and heartbeat, the leases of the
 * sessions it holds (the store's SessionFence), the failover scan that claims sessions other hosts
 * left with pending work, and what a loss does: the session stopped here at once (turn, running
 * cell, workbench tree) with a log line, nothing more written for it.
 */
export class HostLeasing {
  readonly registry: HostRegistry;
  readonly leases: SessionLeases;
  private readonly scan: FailoverScan;
  /** Aborted when the session's lease is lost: its turn's route call is abandoned. */
  private readonly aborts = new Map<string, AbortController>();
  /** Sessions taken over whose work resumes once their claim completes. */
  private readonly takenOver = new Set<string>();

  constructor(private readonly deps: HostLeasingDeps) {
    this.registry = new HostRegistry(deps.store, deps.hostId, deps.address, deps.leaseMs);
    this.leases = new SessionLeases({
      store: deps.store,
      hostId: deps.hostId,
      leaseMs: deps.leaseMs,
      stop: (sessionId, why, detail) => this.stopSession(sessionId, why, detail),
      resume: (lease, previous) => this.resume(lease, previous),
    });
    this.scan = new FailoverScan({ store: deps.store, hostId: deps.hostId, leaseMs: deps.leaseMs, now: deps.now, claim: (sessionId) => this.claim(sessionId) });
  }

  /** This host's id. */
  get hostId(): string {
    return this.deps.hostId;
  }

  /** Register, start renewing and scanning. */
  async start(): Promise<void> {
    await this.registry.start();
    this.leases.start();
    this.scan.start();
  }

  /** Whether another host heartbeat within one lease duration (then a start recovers session by session, on claim). */
  async othersAlive(): Promise<boolean> {
    return (await this.registry.status()).hosts.some((h) => !h.this_host && h.alive);
  }

  /** The session's lease for a client's request: claimed when free, SESSION_HELD_ELSEWHERE when another live host holds it. */
  async hold(sessionId: string): Promise<LeaseKey> {
    const key = await this.leases.hold(sessionId);
    this.afterClaim(sessionId);
    return key;
  }

  /** Whether this host holds (or could claim) the session, for work it would start on its own: a turn, a wake. */
  async claim(sessionId: string): Promise<boolean> {
    try {
      const key = await this.leases.tryHold(sessionId);
      if (key) this.afterClaim(sessionId);
      return key !== null;
    } catch {
      return false;
    }
  }

  /** Whether the session was lost here and not claimed again: its turn and cells stop. */
  lost(sessionId: string): boolean {
    return !this.leases.holds(sessionId) && this.leases.keyFor(sessionId) !== null;
  }

  /** Aborted when this host loses the session (its route calls listen). */
  signalFor(sessionId: string): AbortSignal {
    let controller = this.aborts.get(sessionId);
    if (!controller || controller.signal.aborted) this.aborts.set(sessionId, (controller = new AbortController()));
    return controller.signal;
  }

  /** A write that failed: LEASE_LOST stops its session here (once). */
  writeFailed(error: unknown): void {
    if (error instanceof LeaseLostError) this.leases.lostBy(error.key, error.message);
  }

  /** `klbr status`: the hosts sharing the database and the sessions each holds. */
  status(): Promise<HostsStatus> {
    return this.registry.status();
  }

  /** Stop scanning and heartbeating, and give every lease up (after the workers stopped: their last records are written under them). */
  async stop(): Promise<void> {
    this.scan.stop();
    this.registry.stop();
    await this.leases.stop();
  }

  private afterClaim(sessionId: string): void {
    if (this.takenOver.delete(sessionId)) this.deps.resumeWork(sessionId);
  }

  /** Taking over a lease its holder did not release: close what it left open, as a restart does. */
  private async resume(lease: Lease, previous: LeaseRow): Promise<void> {
    const from = previous.hostId!;
    const reason = from === this.deps.hostId && !this.deps.workbench(lease.sessionId) ? "host_restart" : "host_failover";
    const found = await this.deps.records.recoverSession(lease.sessionId, { hostId: from, epoch: previous.epoch }, reason, this.deps.now());
    // The namespace the model last ran in is on the lost host: the next generation says so (kernel.reset).
    if (reason === "host_failover") this.deps.markEnded(lease.sessionId, "host_failover");
    this.takenOver.add(lease.sessionId);
    this.deps.log("info", "session.taken_over", { session_id: lease.sessionId, epoch: lease.epoch, previous_host: from, previous_epoch: previous.epoch, lost_cells: found.lost, cut_requests: found.requests }, `session ${lease.sessionId}: taken over from host ${from} (epoch ${previous.epoch} -> ${lease.epoch})${found.lost.length > 0 ? `, cells ${found.lost.join(",")} failed host_lost` : ""}`);
  }

  /** A loss: the session stops on this host at once (turn, running cell, workbench tree), with a log line. */
  private stopSession(sessionId: string, why: LossReason, detail: string): void {
    this.aborts.get(sessionId)?.abort(new HostError("LEASE_LOST", `session ${sessionId}: this host lost its lease (${why})`));
    const bench = this.deps.workbench(sessionId);
    const worker = bench?.worker;
    const killing = worker && worker.state !== "dead";
    if (bench) bench.endedFor = "host_failover";
    if (killing) void worker.hardStop("lease_lost").catch(() => undefined);
    this.deps.log(
      "warn",
      "session.lease_lost",
      { session_id: sessionId, reason: why, detail, workbench_killed: Boolean(killing) },
      `session ${sessionId}: lease lost (${why}: ${detail}); stopped on this host${killing ? ", workbench tree killed" : ""}; nothing more is written for it`,
    );
  }
}
