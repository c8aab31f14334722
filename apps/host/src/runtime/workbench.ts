import type { CellCompletion, DisplayListener, HostRequest, HostRequestContext, OutputListener, Worker } from "@klbr/supervisor";
import type { SkillIndex } from "@klbr/skills";
import type { LiveExecution } from "./live-execution";

/** A session's workbench: the current worker generation and the one foreground cell it may run. */
export class Workbench {
  worker: Worker | null = null;
  /** The skill set this generation loaded (its revision is in kernel.reset): what skills.* serve until the next generation. */
  skills: SkillIndex | null = null;
  live: LiveExecution | null = null;
  /** The tail of the foreground queue: one cell per workbench at a time, in arrival order. */
  private tail: Promise<void> = Promise.resolve();
  /** Holders of the slot and those queued for it. */
  private claims = 0;
  /** When the slot was last taken or given back (monotonic ms): idle culling counts from here (C19). */
  lastActiveMs = performance.now();
  /**
   * Why the worker was ended while its session lives on (`idle_culled`), so the next generation's
   * kernel.reset says so; null when it simply died.
   */
  endedFor: string | null = null;
  /** When idle culling shut the worker down (host clock, ms); null once a new generation runs (C19: status says `culled`, not `dead`). */
  culledAtMs: number | null = null;
  /** The worker that died under a cell (its record says why): its death is not one between cells. */
  diedInCell: Worker | null = null;
  /** Waiting for the slot to go idle (see whenIdle). */
  private idleWaiters: Array<() => void> = [];

  constructor(readonly sessionId: string) {}

  /** The generation id of the running worker, if any. */
  get generation(): string | null {
    return this.worker?.generation ?? null;
  }

  /** Whether a request from `executionId` may act now: the current live execution of the current generation. */
  inScope(executionId: string): LiveExecution | null {
    const live = this.live;
    if (!live || live.id !== executionId || live.ended || live.yielded) return null;
    if (live.generation !== this.generation) return null;
    return live;
  }

  /** Whether no cell holds the foreground slot or waits for it. */
  get idle(): boolean {
    return this.claims === 0;
  }

  /** Wait for the foreground slot; resolves with a release function. */
  async acquire(): Promise<() => void> {
    const previous = this.tail;
    let release!: () => void;
    this.claims += 1;
    this.lastActiveMs = performance.now();
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.claims -= 1;
      this.lastActiveMs = performance.now();
      release();
      if (this.claims === 0 && this.idleWaiters.length > 0) setImmediate(() => this.settleIdle());
    };
  }

  /**
   * Resolves the next time the slot is given back with no cell holding it or queued for it. Looked
   * at a turn of the event loop later: the first generation's start (Workbenches.ensure) gives the
   * slot back right before the session's first cell takes it, which is not a quiet moment.
   */
  whenIdle(): Promise<void> {
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private settleIdle(): void {
    if (this.claims > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Run one cell on the current worker with the live execution tracked for scope checks. */
  async run(
    live: LiveExecution,
    code: string,
    onHostRequest: (req: HostRequest, ctx: HostRequestContext) => Promise<unknown>,
    onOutput?: OutputListener,
    onDisplay?: DisplayListener,
    /** Resolves once what the worker sent before its completion reached the clients and the log (displays being stored); awaited before the cell ends. */
    settled?: () => Promise<void>,
  ): Promise<CellCompletion> {
    const worker = this.worker;
    if (!worker) throw new Error("workbench has no worker");
    this.live = live;
    try {
      const completion = await worker.execute(code, { id: live.id, onHostRequest, ...(onOutput ? { onOutput } : {}), ...(onDisplay ? { onDisplay } : {}) });
      if (worker.state === "dead") this.diedInCell = worker;
      return completion;
    } finally {
      await settled?.();
      live.ended = true;
      this.live = null;
    }
  }
}
