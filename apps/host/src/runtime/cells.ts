import type { CellCompletion, DisplayListener, HostRequest, HostRequestContext, OutputListener } from "@klbr/supervisor";
import { HostError } from "../errors";
import { canonicalName, dispatch } from "../requests";
import type { HostServices } from "../requests/context";
import type { DisplayRecorder } from "./displays";
import type { LiveExecution } from "./live-execution";
import type { LiveOutputHub } from "./live-output";
import { ReplyError } from "../requests/errors";
import type { Store } from "../store/api";
import { oversize, refuseOversizeCell } from "./cell-size";
import { ROOT_SESSION } from "./ids";
import { deathReason } from "./limit-death";
import { limitReason, recordCompletion, refusedCompletion, report, type ExecutionReport } from "./completion";
import type { HooksService } from "./hooks-service";
import type { Stopping } from "./lifecycle";
import type { Notify } from "./notifier";
import type { RequestLog } from "./request-log";
import type { Workbench } from "./workbench";
import type { Workbenches } from "./workbenches";

/** How a cell is run: under a caller-chosen id, and who ran it (C20's `origin`: "exec", "model", "mcp", "web", ...). */
export interface CellOptions {
  executionId?: string;
  origin?: string;
}

/** What the cells service uses of the host. */
export interface CellsDeps {
  /** The log: every record of a cell goes through it (awaited, so it is committed before the worker hears of the cell). */
  store: Pick<Store, "startExecution" | "finishExecution" | "getExecution" | "recordIncident" | "requestStep">;
  now(): number;
  newId(prefix: string): string;
  notify: Notify["notify"];
  life: Stopping;
  workbenches: Pick<Workbenches, "ensureHeld" | "restart" | "refuseClosed" | "closed" | "all">;
  hooks: Pick<HooksService, "release">;
  requestLog: Pick<RequestLog, "opened">;
  /** C16: where a running cell's output goes (to watching clients only); null when live output is off. */
  liveOutput: Pick<LiveOutputHub, "forExecution"> | null;
  /** C20: where a running cell's displays are stored and published from. */
  displays: Pick<DisplayRecorder, "forExecution" | "output" | "settled" | "dropped">;
  /** Bring a session's header up to date with changes made outside it (before each of its requests). */
  observeInstructions(sessionId: string): Promise<void>;
  /** What request handlers see (built once every service exists). */
  services(): HostServices;
}

/**
 * Cells: one queue per session (the workbench's foreground slot), execution by execution id,
 * interrupts, the durable record from start to completion, and the host requests a running cell
 * makes. A cell's run is {@link Cells.runCell}: per-execution listeners (live output) subscribe there.
 */
export class Cells {
  /** Cells with a caller-chosen id waiting for their session's slot, and whether they were interrupted meanwhile. */
  private readonly queued = new Map<string, "queued" | "cancelled">();
  /** Each workbench's request intake, in arrival order (see serveRequest). */
  private readonly intakes = new WeakMap<Workbench, Promise<void>>();

  constructor(private readonly deps: CellsDeps) {}

  /** A cell too large to run (known by its size alone, as the CLI tells the daemon): a durable row, then CELL_TOO_LARGE. */
  refuse(sessionId: string, bytes: number): Promise<never> {
    return refuseOversizeCell(this.deps.store, { sessionId, bytes }, this.deps.now());
  }

  /**
   * Run one cell in a session's workbench and record it from start to end (under `executionId`
   * when the caller chose it; `origin` says who ran it: "exec", "model", "mcp", "web", ...).
   */
  async execute(code: string, sessionId: string = ROOT_SESSION, opts: CellOptions = {}): Promise<ExecutionReport> {
    const { store, workbenches } = this.deps;
    workbenches.refuseClosed(sessionId);
    const bytes = oversize(code);
    if (bytes !== null) await this.refuse(sessionId, bytes);
    // A caller-chosen id (a CLI client) lets its Ctrl-C name its own cell, queued or running.
    const queuedId = opts.executionId !== undefined ? this.queue(opts.executionId) : null;
    let release: (() => void) | undefined;
    try {
      // The slot in arrival order, also for a new session's first cells (see ensureHeld).
      const held = await workbenches.ensureHeld(sessionId, "session_start");
      const bench = held.bench;
      release = held.release;
      // Asked of the log in the slot, not before it: an await before ensureHeld would let a later cell take the slot first.
      if (queuedId !== null && (await store.getExecution(queuedId))) throw idInUse(queuedId);
      if (queuedId !== null && this.queued.get(queuedId) === "cancelled") return await this.closeUnrun(queuedId, sessionId, bench.generation ?? "none", code, opts.origin);
      // Checked again in the slot: a stop that came while this cell queued wins over it.
      workbenches.refuseClosed(sessionId);
      // A culled workbench's next generation says so in kernel.reset (C19), a limit's names it (C17); else a death.
      if (!bench.worker || bench.worker.state === "dead") await workbenches.restart(bench, await deathReason(bench));
      const worker = bench.worker!;
      const live: LiveExecution = { id: opts.executionId ?? this.deps.newId("ex"), sessionId, generation: worker.generation, yielded: false, ended: false, hooksPin: null };
      // A restart may have run meanwhile: an interrupt that came during it still keeps the cell from running.
      if (queuedId !== null && this.queued.get(queuedId) === "cancelled") return await this.closeUnrun(queuedId, sessionId, live.generation, code, opts.origin);
      await store.startExecution({ id: live.id, sessionId, generation: live.generation, code, startedAtMs: this.deps.now(), origin: opts.origin ?? "exec" });
      // The store may answer later than at once (PostgreSQL): an interrupt that came while the row
      // was written finds the cell still queued, and it is closed without running.
      if (queuedId !== null && this.queued.get(queuedId) === "cancelled") return await this.finishUnrun(queuedId, sessionId);
      // From here the cell is the live one (bench.run sets it before any await): the ladder reaches it.
      if (queuedId !== null) this.queued.delete(queuedId);
      const completion = await this.runCell(bench, live, code);
      const row = await recordCompletion(store, live, completion, this.deps.now(), this.deps.displays.dropped(live, (completion as { displays_dropped?: number }).displays_dropped));
      this.deps.notify({ type: "execution", session_id: sessionId, execution_id: live.id, status: row.status, at_ms: this.deps.now() });
      if (worker.state === "dead" && !this.deps.life.stopping && !workbenches.closed(sessionId)) {
        // The cell's record is closed already: a failed restart must not lose its report. The next
        // cell finds the worker dead and tries again.
        // A session this host lost (C21) is refused its restart: it writes nothing more here, no incident either.
        await workbenches.restart(bench, limitReason(row.failure) ?? `after_${row.status}`).catch((error: Error & { code?: string }) =>
          error.code === "SESSION_NOT_HELD" ? undefined : store.recordIncident("workbench.restart_failed", { session_id: sessionId, after: live.id, error: error.message }, this.deps.now()),
        );
      }
      return report(row);
    } finally {
      if (queuedId !== null) this.queued.delete(queuedId);
      release?.();
    }
  }

  /**
   * Run the live cell on the workbench's worker, serving its host requests, until it completes;
   * a refusal to run becomes a failed completion. Its hooks pin is released when it ends.
   */
  private async runCell(bench: Workbench, live: LiveExecution, code: string): Promise<CellCompletion> {
    const startedAt = Date.now();
    try {
      return await bench.run(live, code, (req, ctx) => this.serveRequest(bench, req, ctx), this.outputOf(live), this.displaysOf(live), () => this.deps.displays.settled(live));
    } catch (error) {
      return refusedCompletion(live.id, startedAt, error as Error & { code?: string });
    } finally {
      this.deps.hooks.release(live);
    }
  }

  /** The cell's live output listener: each message to the clients watching it, nothing kept, in order with its displays. */
  private outputOf(live: LiveExecution): OutputListener | undefined {
    const listener = this.deps.liveOutput?.forExecution(live);
    return listener && this.deps.displays.output(live, listener);
  }

  /** The cell's display listener (C20): each display stored, then to the clients watching it. */
  private displaysOf(live: LiveExecution): DisplayListener {
    return this.deps.displays.forExecution(live);
  }

  /** Interrupt a running cell through the C7 ladder: by id, or whatever runs in the session. */
  async interrupt(target: { executionId?: string; sessionId?: string }): Promise<unknown> {
    for (const bench of this.deps.workbenches.all()) {
      const live = bench.live;
      if (!live || !bench.worker) continue;
      if (target.executionId ? live.id === target.executionId : bench.sessionId === (target.sessionId ?? ROOT_SESSION)) {
        return { execution_id: live.id, ...(await bench.worker.interrupt(live.id)) };
      }
    }
    // Not running yet: a queued cell named by its id is closed when its turn comes, without running.
    if (target.executionId !== undefined && this.queued.get(target.executionId) === "queued") {
      this.queued.set(target.executionId, "cancelled");
      return { execution_id: target.executionId, rung: "before_start" };
    }
    return { rung: "not_running" };
  }

  /** Register a caller-chosen execution id as queued; an id queued already is refused (one in the log is, in the slot). */
  private queue(id: string): string {
    if (this.queued.has(id)) throw idInUse(id);
    this.queued.set(id, "queued");
    return id;
  }

  /** A queued cell interrupted before its turn: recorded as interrupted, its code never sent. */
  private async closeUnrun(id: string, sessionId: string, generation: string, code: string, origin: string | undefined): Promise<ExecutionReport> {
    await this.deps.store.startExecution({ id, sessionId, generation, code, startedAtMs: this.deps.now(), origin: origin ?? "exec" });
    return this.finishUnrun(id, sessionId);
  }

  /** The record of a cell interrupted before its code was sent, opened already: closed as interrupted. */
  private async finishUnrun(id: string, sessionId: string): Promise<ExecutionReport> {
    const now = this.deps.now();
    const row = (await this.deps.store.finishExecution(sessionId, id, { status: "interrupted", endedBy: "before_start", error: "interrupted while queued; the cell never ran", endedAtMs: now, displaysDropped: 0 }))!;
    this.deps.notify({ type: "execution", session_id: sessionId, execution_id: id, status: row.status, at_ms: now });
    return report(row);
  }

  /** Serve one host request: scope first, then the handler; the request is logged now, its reply as sent. */
  private async serveRequest(bench: Workbench, request: HostRequest, ctx: HostRequestContext): Promise<unknown> {
    // One workbench's requests are taken in in arrival order, each up to its handler's start: the
    // log's writes are awaited now, and without this a wait pipelined behind another passed the
    // scope check before the first one's handler had yielded the cell.
    const prior = this.intakes.get(bench) ?? Promise.resolve();
    let admitted!: () => void;
    const intake = new Promise<void>((resolve) => (admitted = resolve));
    this.intakes.set(bench, prior.then(() => intake));
    await prior;
    try {
      return await this.admit(bench, request, ctx, admitted);
    } finally {
      admitted();
    }
  }

  /** The request's row, scope, header and step, then its handler started (`admitted` called once it is). */
  private async admit(bench: Workbench, request: HostRequest, ctx: HostRequestContext, admitted: () => void): Promise<unknown> {
    const { store } = this.deps;
    try {
      // The reply is logged when the supervisor reports what went out (RequestLog.replied).
      const rowId = await this.deps.requestLog.opened(bench.sessionId, ctx.executionId, ctx.requestId, request);
      const live = bench.inScope(ctx.executionId);
      if (!live) throw new ReplyError("scope_expired", `execution ${ctx.executionId} is not the live foreground cell of this generation`);
      try {
        await this.deps.observeInstructions(live.sessionId);
      } catch (error) {
        // A header that cannot be observed must not cost the cell its request; the incident says why.
        await store.recordIncident("header.observe_failed", { session_id: live.sessionId, error: String(error) }, this.deps.now());
      }
      // The supervisor hands over a request it already validated (parseHostRequest): not parsed twice.
      const step = await store.requestStep(ctx.executionId, rowId);
      const handling = dispatch({ host: this.deps.services(), live, requestId: ctx.requestId, step, signal: ctx.signal }, request as never);
      admitted();
      return await handling;
    } catch (error) {
      admitted();
      if (!(error instanceof ReplyError)) await store.recordIncident("request.internal_error", { method: canonicalName(request.method), error: String(error) }, this.deps.now());
      throw error instanceof ReplyError ? error : new ReplyError("internal", (error as Error).message);
    }
  }
}

function idInUse(id: string): HostError {
  return new HostError("EXECUTION_ID_IN_USE", `execution id ${JSON.stringify(id)} is already used`);
}
