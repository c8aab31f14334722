import type { WorkbenchPoolView } from "./status";
import type { Workbench } from "./workbench";
import type { Workbenches } from "./workbenches";

/** What idle culling uses of the host. */
export interface CullingDeps {
  /** Shut a workbench down after this long idle (ms). */
  idleTimeoutMs: number;
  /** Every session's workbench. */
  all(): Workbench[];
  /** Whether the session has a model turn in progress (it is never idle then). */
  turnRunning(sessionId: string): boolean;
  /** Told of each workbench culled (status counts, the log). */
  onCulled(bench: Workbench, idleMs: number): void;
}

/** The sweep runs this often relative to the timeout (and at least every 5 s): a cull is late by at most that. */
const SWEEP_FRACTION = 8;

/**
 * Idle culling (C19): a workbench with no running or queued cell (so no open scope and no pending
 * `peer.result`, which only a running cell holds) and no turn in progress for `idleTimeoutMs` is
 * shut down. Its session lives on: the next cell or turn starts a new generation whose kernel.reset
 * reason is `idle_culled`. One timer sweeps every workbench, whatever their number.
 */
export class IdleCuller {
  private timer: NodeJS.Timeout | null = null;
  /** Workbenches culled since the host started. */
  culled = 0;

  constructor(private readonly deps: CullingDeps) {}

  /** Start sweeping. */
  start(): void {
    const every = Math.max(10, Math.min(5000, Math.floor(this.deps.idleTimeoutMs / SWEEP_FRACTION)));
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  /** Whether the workbench has been idle for the timeout (a live worker, no cell, no turn). */
  isIdle(bench: Workbench, nowMs = performance.now()): boolean {
    return this.quiet(bench) && nowMs - bench.lastActiveMs >= this.deps.idleTimeoutMs;
  }

  /** A live worker with nothing running or queued and no turn in progress. */
  quiet(bench: Workbench): boolean {
    const worker = bench.worker;
    return worker !== null && worker.state === "ready" && bench.idle && !this.deps.turnRunning(bench.sessionId);
  }

  /** Cull every workbench idle past the timeout as of `now` (monotonic ms); resolves when their workers are gone. */
  async sweep(now = performance.now()): Promise<void> {
    await Promise.all(this.deps.all().filter((b) => this.isIdle(b, now)).map((b) => this.cull(b)));
  }

  private async cull(bench: Workbench): Promise<void> {
    const idleMs = performance.now() - bench.lastActiveMs;
    // Holding the slot, no cell can start on the worker being shut down; one that queued meanwhile
    // runs after, on a new generation (Cells finds the worker dead and restarts with endedFor).
    const release = await bench.acquire();
    try {
      const worker = bench.worker;
      if (!worker || worker.state !== "ready" || this.deps.turnRunning(bench.sessionId)) return;
      bench.endedFor = "idle_culled";
      await worker.shutdown();
      // Counted once the worker is gone, so `klbr status` never counts a cull whose workbench it
      // still lists as `stopping`.
      this.culled += 1;
      this.deps.onCulled(bench, idleMs);
    } finally {
      release();
    }
  }

  /** Stop sweeping. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Spares and culling for `klbr status` (C19). */
export function workbenchPool(workbenches: Pick<Workbenches, "all" | "spares">, culler: IdleCuller | null, idleTimeoutMs: number | undefined): WorkbenchPoolView {
  const live = workbenches.all().filter((b) => b.worker !== null && b.worker.state !== "dead");
  const { spares } = workbenches;
  return {
    spare: { target: spares.target, ready: spares.available, pids: spares.pids },
    idle_timeout_ms: idleTimeoutMs ?? null,
    live: live.length,
    idle: live.filter((b) => b.idle && b.worker!.state === "ready").length,
    culled: culler?.culled ?? 0,
  };
}
