import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type Database from "better-sqlite3";
import type { SessionActor } from "@klbr/header";
import { formatStamp, frameInput } from "@klbr/transcript";
import { resolvePython, startWorker, type CellCompletion, type HostRequest, type HostRequestContext, type Worker } from "@klbr/supervisor";
import { migrateHostDb, openHostDatabase, type HostDb } from "../db/open";
import { secureDataDir } from "../db/secure";
import { dataLayout, defaultPythonDir, type DataLayout } from "../paths";
import { canonicalName, dispatch } from "../requests";
import type { HookOutcome, HostServices, LiveExecution, Notification } from "../requests/context";
import { ReplyError } from "../requests/errors";
import { HostError } from "../errors";
import { deferredDueAt, getEvent, markConsumed, openDeferredInputs, pendingInputs, recordInput, setAttention, type EventRow } from "../store/events";
import { finishExecution, getExecution, startExecution, type ExecutionRow, type ExecutionStatus } from "../store/executions";
import { recordIncident } from "../store/incidents";
import { lastKernelReset, recordKernelReset } from "../store/kernel";
import { requestStep } from "../store/requests";
import { openWorkItems, workItemView } from "../store/work-items";
import { adoptedScopes, currentSources } from "../store/orientation";
import { allPeers, peerView, stoppedPeerSessions } from "../store/peers";
import { HostSandbox } from "../sandbox/host-sandbox";
import { sandboxSettings, type SandboxMode } from "../sandbox/settings";
import { wakeWait, wakeWaits, type WaitRow } from "../store/waits";
import { BehaviourManager } from "./behaviour";
import { HooksService, type HooksGeneration } from "./hooks-service";
import { acquireHostLock } from "./host-lock";
import { hostBaseEnv, HOST_TREE_ENV, passEnvNames, sweepLeftovers } from "./leftovers";
import { noteRuntimeVersion } from "./version-check";
import { oversize, refuseOversizeCell } from "./cell-size";
import { newId } from "./ids";
import { InstructionHeaders } from "./instructions";
import { adoptedSources } from "./orientation-sources";
import { peerRequestsSection } from "./peer-frontier";
import { PeerSignals } from "./peer-signals";
import { recoverAfterCrash } from "./recovery";
import { RequestLog } from "./request-log";
import { RemoteNamespaces } from "./remote-service";
import type { SkillIndex } from "@klbr/skills";
import { SkillsService } from "./skills-service";
import { Workbench } from "./workbench";
import { DEFAULT_FRONTIER_SECTIONS, frontierBlock, type FrontierSectionProvider } from "./frontier-block";
import { Turns, type DriveOptions } from "./turns";
import type { TurnHost } from "./session";
import { recordFrontier } from "../store/frontiers";
import { lastSeq } from "../store/transcript";

/** How a host is set up. */
export interface HostOptions {
  /** The data directory: durable log, releases, managed skills, control socket. */
  dataDir: string;
  /** The workspace commands run in; defaults to the current directory. */
  workspace?: string;
  /** The directory holding the Python `klbr` runtime and the default behaviour source. */
  pythonDir?: string;
  /** The Python interpreter; defaults to KLBR_PYTHON or python3's sys.executable. */
  python?: string;
  /** Builtin skills root; defaults to KLBR_SKILLS_DIR or <workspace>/skills. */
  builtinSkillsDir?: string;
  /** Interrupt ladder graces (C7). */
  interruptGraceMs?: number;
  sigintGraceMs?: number;
  /** The host clock, for tests. */
  now?: () => number;
  /** Run every worker and workspace.run command in a bubblewrap sandbox; default KLBR_SANDBOX or none. */
  sandbox?: SandboxMode;
  /** Network inside the sandbox; default KLBR_SANDBOX_NETWORK or on. Off needs sandbox bwrap. */
  network?: boolean;
  /** Drive sessions with a model route (C10): `true` for the default route of `<data>/routes.json`. */
  drive?: DriveOptions | boolean;
  /** Host environment variables workers and commands also get (C15), besides those named in KLBR_PASS_ENV. */
  passEnv?: string[];
}

/** What a finished cell looks like to a caller (derived from its durable row). */
export interface ExecutionReport {
  id: string;
  session_id: string;
  generation: string;
  status: ExecutionRow["status"];
  output: Array<{ stream: string; text: string }>;
  truncated_bytes: number;
  error: string | null;
  ended_by: string | null;
  failure: unknown;
  started_at_ms: number;
  ended_at_ms: number | null;
}

/** The root session every host runs. */
export const ROOT_SESSION = "root";

/**
 * The composer: one durable log, one hooks worker on the active release, one workbench per
 * session. Everything it reports is read back from the log.
 */
export class Host implements HostServices {
  readonly layout: DataLayout;
  readonly workspace: string;
  readonly dataDir: string;
  readonly db: HostDb;
  readonly startedAtMs: number;
  /** The sandbox every worker and workspace.run command of this host runs in. */
  readonly sandbox: HostSandbox;
  readonly sqlite: Database.Database;
  private readonly pythonDir: string;
  private readonly python: string;
  private readonly hooks: HooksService;
  private readonly behaviour: BehaviourManager;
  private readonly skills: SkillsService;
  private readonly headers: InstructionHeaders;
  private readonly requestLog: RequestLog;
  /** Cells with a caller-chosen id waiting for their session's slot, and whether they were interrupted meanwhile. */
  private readonly queued = new Map<string, "queued" | "cancelled">();
  private readonly workbenches = new Map<string, Workbench>();
  private readonly listeners = new Set<(n: Notification) => void>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Sessions closed for good (stopped peers): no cell starts there again. */
  private readonly closedSessions = new Set<string>();
  /** In-cell waits on peer requests. */
  readonly peerSignals = new PeerSignals();
  /** Remote namespaces over ssh (C14). */
  readonly remote: RemoteNamespaces;
  /** The replacement of a dead hooks worker under way, shared by every caller that found it dead. */
  private hooksRestart: Promise<void> | null = null;
  private stopping = false;
  private readonly releaseLock: () => void;
  /** The model turns, when this host drives sessions. */
  turns: Turns | null = null;
  private readonly frontierSections: FrontierSectionProvider[] = [...DEFAULT_FRONTIER_SECTIONS];
  private readonly aborts = new AbortController();

  /** This run's KLBR_HOST_TREE value (see runtime/leftovers.ts). */
  private hostTree = "";
  /** Host environment variables passed to what the host starts (C15). */
  readonly passEnv: string[];

  private constructor(private readonly options: HostOptions) {
    this.passEnv = passEnvNames(options.passEnv);
    this.layout = dataLayout(resolve(options.dataDir));
    this.dataDir = this.layout.dataDir;
    this.workspace = resolve(options.workspace ?? process.cwd());
    this.pythonDir = options.pythonDir ?? defaultPythonDir();
    this.python = options.python ?? resolvePython();
    this.sandbox = new HostSandbox(sandboxSettings({ sandbox: options.sandbox, network: options.network }), {
      workspace: this.workspace,
      dataDir: this.dataDir,
      controlSocket: this.layout.controlSocket,
      pythonDir: this.pythonDir,
      python: this.python,
    });
    for (const dir of [this.dataDir, this.layout.releases, this.layout.managedSkills]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    secureDataDir(this.dataDir);
    this.releaseLock = acquireHostLock(this.layout.lock);
    try {
      this.sqlite = openHostDatabase(this.layout.database);
      this.db = migrateHostDb(this.sqlite);
    } catch (error) {
      this.releaseLock();
      throw error;
    }
    this.startedAtMs = this.now();
    this.hooks = new HooksService((gen) => void this.retireHooks(gen));
    this.behaviour = new BehaviourManager(this.sqlite, this.layout.releases, join(this.pythonDir, "klbr_hooks"), (release) =>
      this.spawnHooks(release),
    );
    this.skills = new SkillsService({
      builtinDir: options.builtinSkillsDir ?? process.env.KLBR_SKILLS_DIR ?? join(this.workspace, "skills"),
      managedDir: this.layout.managedSkills,
    });
    this.headers = new InstructionHeaders(this.db, () => this.now(), (sessionId) => adoptedSources(this.db, sessionId));
    this.requestLog = new RequestLog(this.db, () => this.now());
    this.remote = new RemoteNamespaces({
      db: this.db,
      dataDir: this.dataDir,
      pythonDir: this.pythonDir,
      now: () => this.now(),
      newId: (prefix) => this.newId(prefix),
      ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
      ...(options.sigintGraceMs !== undefined ? { sigintGraceMs: options.sigintGraceMs } : {}),
    });
    this.addFrontierSection(peerRequestsSection(this.db));
  }

  /** Start a host: migrate, recover, start the hooks worker and the root workbench (whose start indexes the skills). */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      host.hostTree = (await sweepLeftovers(host.dataDir)).tag;
      await host.sandbox.check();
      if (options.drive) host.turns = new Turns(host.turnHost(), host.layout.routes, options.drive === true ? {} : options.drive);
      host.behaviour.migrate();
      const recovered = recoverAfterCrash(host.db, host.now());
      for (const wait of recovered.openWaits) if (wait.deadlineMs !== null) host.scheduleWaitDeadline(wait.id, wait.deadlineMs);
      for (const input of openDeferredInputs(host.db)) host.scheduleDeferredInput(input.id, deferredDueAt(input) ?? host.now());
      for (const sessionId of stoppedPeerSessions(host.db)) host.closedSessions.add(sessionId);
      const gen = await host.behaviour.startActive();
      if (gen) host.hooks.install(gen);
      await host.ensureWorkbench(ROOT_SESSION, "host_start");
      const turns = host.turns;
      if (turns) {
        host.subscribe((n) => {
          // A deferred or ignored input starts no turn: its wake (if any) comes later, as a wake.
          const action = n.type === "input" ? (n.attention as { effective?: { action?: string } } | null)?.effective?.action : undefined;
          if (n.type === "wake" || n.type === "deferred" || (n.type === "input" && (action === undefined || action === "wake"))) turns.kick(n.session_id);
        });
        turns.resume();
      }
      return host;
    } catch (error) {
      await host.stop();
      throw error;
    }
  }

  // ---- HostServices -------------------------------------------------------------------

  /** The environment everything the host starts begins from (C15). */
  baseEnv(): Record<string, string> {
    return hostBaseEnv(this.passEnv, this.hostTree);
  }

  /** The host clock. */
  now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** A fresh identifier. */
  newId(prefix: string): string {
    return newId(prefix);
  }

  /** Invoke a decision slot; a dead hooks worker is replaced on the same release first. */
  async invokeHook(live: LiveExecution | null, slot: "attention.plan" | "delivery.review", input: unknown): Promise<HookOutcome> {
    const current = this.hooks.current;
    if (current && current.worker.state === "dead" && !live?.hooksPin && !this.stopping) {
      try {
        await this.restartHooks(current);
      } catch (error) {
        return { ok: false, reason: `hooks worker could not be restarted: ${(error as Error).message}`, revision: current.revision };
      }
    }
    return this.hooks.invoke(live, slot, input);
  }

  /**
   * Replace a dead hooks worker on the same release, once for every caller that found it dead.
   * An activation that installed a new generation meanwhile wins: the replacement is discarded.
   */
  private restartHooks(dead: HooksGeneration): Promise<void> {
    this.hooksRestart ??= (async () => {
      recordIncident(this.db, "hooks.restart", { revision: dead.revision, reason: "worker not running" }, this.now());
      const replacement = await this.spawnHooks({ path: dead.path, digest: dead.revision, epoch: dead.epoch });
      if (this.hooks.current === dead) this.hooks.install(replacement);
      else await replacement.worker.shutdown().catch(() => undefined);
    })().finally(() => {
      this.hooksRestart = null;
    });
    return this.hooksRestart;
  }

  /** The active behaviour revision and its manifest entrypoints. */
  hooksInfo() {
    const gen = this.hooks.current;
    return gen ? { revision: gen.revision, epoch: gen.epoch, path: gen.path, hooks: gen.hooks } : null;
  }

  /** The skill set the session's generation loaded, as the model may see it (a skill written since is the next generation's). */
  skillsIndex(sessionId: string): unknown {
    return this.skills.view(this.generationSkills(sessionId));
  }

  /** One skill body of the session's generation's set, checked against the digest it was indexed with. */
  loadSkill(sessionId: string, id: string): unknown {
    return this.skills.load(this.generationSkills(sessionId), id);
  }

  private generationSkills(sessionId: string): SkillIndex {
    const index = this.workbenches.get(sessionId)?.skills;
    if (!index) throw new ReplyError("unavailable", `session ${sessionId} has no workbench generation with a skill set`);
    return index;
  }

  /** The live index's revision (both roots indexed now), or null when a root is unusable. */
  private async liveSkillsRevision(): Promise<string | null> {
    return (await this.skills.reindex().catch(() => null))?.revision ?? null;
  }

  /** The exact current instruction text of a session. */
  instructions(sessionId: string): unknown {
    return this.headers.current(sessionId);
  }

  /** Observe a change the session made itself (orientation.adopt); returns its header digest after it. */
  reviseInstructions(sessionId: string, actor: SessionActor): string | null {
    return this.headers.observe(sessionId, actor);
  }

  /**
   * Bring a session's header up to date with changes made outside it (another session adopted
   * orientation in its scope): observed as a host revision. Done before each of its requests; a
   * model driver calls it before assembling a request.
   */
  observeInstructions(sessionId: string): string | null {
    return this.headers.observe(sessionId, { origin: "host", reason: "instruction sources changed outside this session" });
  }

  /** runtime.inspect (C8); `skills_revision` is the generation's set, `skills_live_revision` the roots now. */
  async inspect(sessionId: string): Promise<unknown> {
    const now = this.now();
    const bench = this.workbenches.get(sessionId);
    return {
      now: formatStamp(now),
      now_ms: now,
      session_id: sessionId,
      generation: bench?.generation ?? null,
      workbench_pid: bench?.worker?.pid ?? null,
      hooks: this.hooksInfo(),
      skills_revision: bench?.skills?.revision ?? null,
      skills_live_revision: await this.liveSkillsRevision(),
      workspace: this.workspace,
      host_started_at_ms: this.startedAtMs,
      sandbox: this.sandbox.describe(),
    };
  }

  /** behavior.activate: candidate handshake first, then the compare-and-swap; the workbench stays. */
  async activate(path: string, expectedEpoch: number): Promise<unknown> {
    const outcome = await this.behaviour.activate(path, expectedEpoch);
    this.hooks.install(outcome.generation);
    this.notify({ type: "hooks", revision: outcome.generation.revision, epoch: outcome.generation.epoch, at_ms: this.now() });
    return { epoch: outcome.generation.epoch, revision: outcome.generation.revision, path: outcome.generation.path };
  }

  /** Wake a wait when its deadline passes (timers are rebuilt from the log after a restart). */
  scheduleWaitDeadline(waitId: string, deadlineMs: number): void {
    this.at(deadlineMs, () => {
      // Only this wait: another open wait of the session has its own deadline, or none.
      const woken = wakeWait(this.db, waitId, "deadline", this.now());
      if (woken) this.announceWakes([woken], "deadline");
    });
  }

  /**
   * Wake a deferred input's session when its seconds pass (timers are rebuilt from the log at
   * start, so a restart in between wakes it then, at once when it is overdue).
   */
  scheduleDeferredInput(eventId: number, dueAtMs: number): void {
    this.at(dueAtMs, () => this.wakeDeferred(eventId));
  }

  /**
   * Run `fire` at a host-clock instant (at once when overdue). Nothing is scheduled or fired while
   * the host stops: it would act on a closed log; the next start rebuilds the timer from the row.
   */
  private at(dueAtMs: number, fire: () => void): void {
    if (this.stopping) return;
    const delay = Math.min(Math.max(0, dueAtMs - this.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopping) fire();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private wakeDeferred(eventId: number): void {
    const event = getEvent(this.db, eventId);
    // Taken into account meanwhile (another wake carried it): nothing is left to wake for.
    if (!event || event.consumedAtMs !== null) return;
    const by = `deferred:event:${eventId}`;
    const woken = wakeWaits(this.db, event.sessionId, by, this.now());
    this.announceWakes(woken, by);
    this.notify({ type: "deferred", session_id: event.sessionId, event_id: eventId, at_ms: this.now() });
  }

  /** Tell every subscriber; a failing subscriber never breaks the host. */
  notify(notification: Notification): void {
    for (const listener of this.listeners) {
      try {
        listener(notification);
      } catch {
        /* a subscriber's failure is its own */
      }
    }
  }

  // ---- the operator's side ------------------------------------------------------------

  /** Subscribe to notifications; returns the unsubscribe function. */
  subscribe(listener: (n: Notification) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A cell too large to run (known by its size alone, as the CLI tells the daemon): a durable row, then CELL_TOO_LARGE. */
  refuseCell(sessionId: string, bytes: number): never {
    return refuseOversizeCell(this.db, { sessionId, bytes }, this.now());
  }

  /** Run one cell in a session's workbench and record it from start to end (under `executionId` when the caller chose it). */
  async execute(code: string, sessionId: string = ROOT_SESSION, opts: { executionId?: string } = {}): Promise<ExecutionReport> {
    this.refuseClosed(sessionId);
    const bytes = oversize(code);
    if (bytes !== null) this.refuseCell(sessionId, bytes);
    // A caller-chosen id (a CLI client) lets its Ctrl-C name its own cell, queued or running.
    const queuedId = opts.executionId !== undefined ? this.queueExecution(opts.executionId) : null;
    let release: (() => void) | undefined;
    try {
      const bench = await this.ensureWorkbench(sessionId, "session_start");
      release = await bench.acquire();
      if (queuedId !== null && this.queued.get(queuedId) === "cancelled") return this.closeUnrun(queuedId, sessionId, bench.generation ?? "none", code);
      // Checked again in the slot: a stop that came while this cell queued wins over it.
      this.refuseClosed(sessionId);
      if (!bench.worker || bench.worker.state === "dead") await this.restartWorkbench(bench, "worker_died");
      const worker = bench.worker!;
      const live: LiveExecution = {
        id: opts.executionId ?? newId("ex"),
        sessionId,
        generation: worker.generation,
        yielded: false,
        ended: false,
        hooksPin: null,
      };
      // A restart may have run meanwhile: an interrupt that came during it still keeps the cell from running.
      if (queuedId !== null && this.queued.get(queuedId) === "cancelled") return this.closeUnrun(queuedId, sessionId, live.generation, code);
      // From here the cell is the live one (bench.run sets it before any await): the ladder reaches it.
      if (queuedId !== null) this.queued.delete(queuedId);
      startExecution(this.db, { id: live.id, sessionId, generation: live.generation, code, startedAtMs: this.now() });
      const startedAt = Date.now();
      let completion: CellCompletion;
      try {
        completion = await bench.run(live, code, (req, ctx) => this.serveRequest(bench, req, ctx));
      } catch (error) {
        // The worker refused the cell (it cannot be sent, or the worker died just now): the record
        // is closed as failed from the host's observation, never left running.
        const e = error as Error & { code?: string };
        completion = { kind: "failed", source: "host", id: live.id, startedAt, endedAt: Date.now(), endedBy: "refused", error: e.message, reason: e.code ?? "refused", exit: null, tails: null };
      } finally {
        this.hooks.release(live);
      }
      const row = this.recordCompletion(live, completion);
      this.notify({ type: "execution", session_id: sessionId, execution_id: live.id, status: row.status, at_ms: this.now() });
      if (worker.state === "dead" && !this.stopping && !this.closedSessions.has(sessionId)) {
        // The cell's record is closed already: a failed restart must not lose its report. The next
        // cell finds the worker dead and tries again.
        await this.restartWorkbench(bench, `after_${row.status}`).catch((error: Error) =>
          recordIncident(this.db, "workbench.restart_failed", { session_id: sessionId, after: live.id, error: error.message }, this.now()),
        );
      }
      return report(row);
    } finally {
      if (queuedId !== null) this.queued.delete(queuedId);
      release?.();
    }
  }

  /** Register a caller-chosen execution id as queued; an id already used is refused. */
  private queueExecution(id: string): string {
    if (this.queued.has(id) || getExecution(this.db, id)) throw new HostError("EXECUTION_ID_IN_USE", `execution id ${JSON.stringify(id)} is already used`);
    this.queued.set(id, "queued");
    return id;
  }

  /** A queued cell interrupted before its turn: recorded as interrupted, its code never sent. */
  private closeUnrun(id: string, sessionId: string, generation: string, code: string): ExecutionReport {
    const now = this.now();
    startExecution(this.db, { id, sessionId, generation, code, startedAtMs: now });
    const row = finishExecution(this.db, id, { status: "interrupted", endedBy: "before_start", error: "interrupted while queued; the cell never ran", endedAtMs: now })!;
    this.notify({ type: "execution", session_id: sessionId, execution_id: id, status: row.status, at_ms: now });
    return report(row);
  }

  /** Interrupt a running cell through the C7 ladder: by id, or whatever runs in the session. */
  async interrupt(target: { executionId?: string; sessionId?: string }): Promise<unknown> {
    for (const bench of this.workbenches.values()) {
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

  /** Operator (or classified external) input: recorded, planned by attention.plan, and it may wake a wait. */
  async postInput(text: string, opts: { source?: string; sessionId?: string } = {}): Promise<{ event_id: number; attention: unknown }> {
    const sessionId = opts.sessionId ?? ROOT_SESSION;
    const source = opts.source ?? "operator";
    const receivedAtMs = this.now();
    const event = recordInput(this.db, { sessionId, source, receivedAtMs, payload: { text }, attention: null });
    const hook = await this.invokeHook(null, "attention.plan", { event_id: event.id, source, received_at_ms: receivedAtMs });
    const planned = effectiveAttention(source, hook);
    // A defer is kept with the instant it is due, so a restart knows when to wake the session.
    const effective = planned.action === "defer" ? { ...planned, due_at_ms: receivedAtMs + Math.round(Number(planned.seconds) * 1000) } : planned;
    const attention = { hook: hook.ok ? hook.value : { unavailable: hook.reason }, revision: hook.revision, effective };
    setAttention(this.db, event.id, attention);
    const woken = effective.action === "wake" ? wakeWaits(this.db, sessionId, `event:${event.id}`, this.now()) : [];
    this.announceInput({ ...event, attention }, woken);
    if (effective.action === "ignore") markConsumed(this.db, [event.id], this.now());
    if (effective.action === "defer") this.scheduleDeferredInput(event.id, effective.due_at_ms as number);
    return { event_id: event.id, attention };
  }

  /** The tail every input's path shares (operator input, peer requests and results): the input notification, then the wakes. */
  announceInput(event: EventRow, woken: WaitRow[]): void {
    this.notify({ type: "input", session_id: event.sessionId, event_id: event.id, source: event.source, attention: event.attention, at_ms: event.receivedAtMs });
    this.announceWakes(woken, `event:${event.id}`);
  }

  /** Pin a new session's header from the current instruction sources (a peer's, at peer.open). */
  async pinSession(sessionId: string): Promise<void> {
    const index = await this.skills.reindex();
    this.headers.observeGeneration(sessionId, (adopted) => this.skills.sources(index, adopted));
  }

  /** Whether a session's workbench runs no cell and has none queued. */
  sessionIdle(sessionId: string): boolean {
    const bench = this.workbenches.get(sessionId);
    return (!bench || bench.idle) && !this.turns?.turnOf(sessionId);
  }

  /**
   * Close a session for good: refused for new cells from now; its workbench shut down after its
   * current turn and the cell it runs (drain), or hard-stopped at once, the running cell with it.
   */
  async closeSession(sessionId: string, drain: boolean): Promise<boolean> {
    // Driven by a model, a draining session finishes its current turn first (C13); new sends are
    // refused meanwhile (the peer is `stopping`), so no new turn is asked for.
    const turn = drain ? this.turns?.turnOf(sessionId) : null;
    if (turn) await turn.catch(() => undefined);
    this.closedSessions.add(sessionId);
    const bench = this.workbenches.get(sessionId);
    if (bench) {
      if (drain) {
        const release = await bench.acquire();
        try {
          if (bench.worker && bench.worker.state !== "dead" && !this.stopping) await bench.worker.shutdown();
        } finally {
          release();
        }
      } else if (bench.worker && bench.worker.state !== "dead") {
        await bench.worker.hardStop("peer.stop");
      }
    }
    if (this.stopping) return false;
    this.notify({ type: "session.stopped", session_id: sessionId, drain, at_ms: this.now() });
    return true;
  }

  /** Workers, generations, epoch, skills revision and tails, for `klbr status`. */
  status(): unknown {
    const hooks = this.hooks.current;
    return {
      data_dir: this.dataDir,
      workspace: this.workspace,
      started_at_ms: this.startedAtMs,
      sandbox: this.sandbox.describe(),
      hooks: hooks
        ? { pid: hooks.worker.pid, generation: hooks.worker.generation, state: hooks.worker.state, revision: hooks.revision, epoch: hooks.epoch, sandbox: this.sandbox.describe(), stderr_tail: hooks.worker.stderrTail }
        : null,
      workbenches: [...this.workbenches.values()].map((b) => ({
        session_id: b.sessionId,
        generation: b.generation,
        pid: b.worker?.pid ?? null,
        state: b.worker?.state ?? "dead",
        running: b.live?.id ?? null,
        sandbox: this.sandbox.describe(),
        stdout_tail: b.worker?.stdoutTail ?? "",
        stderr_tail: b.worker?.stderrTail ?? "",
        skills_revision: b.skills?.revision ?? null,
      })),
      // The root generation's set; the live index only under its own field (as last indexed).
      skills_revision: this.workbenches.get(ROOT_SESSION)?.skills?.revision ?? null,
      skills_live_revision: this.skills.revision,
      driving: this.turns ? { route: this.turns.route.name, api: this.turns.route.api, model: this.turns.route.model } : null,
      pending_inputs: pendingInputs(this.db, ROOT_SESSION).length,
      open_work_items: openWorkItems(this.db).map(workItemView),
      orientation: adoptedScopes(this.db).map((scope) => ({ scope, sources: currentSources(this.db, scope) })),
      ...this.sessionsStatus(),
      remote: this.remote.status(),
    };
  }

  /** Every session this host knows (the root, each peer, any other with a workbench) and every peer. */
  private sessionsStatus(): { sessions: unknown[]; peers: unknown[] } {
    const peers = allPeers(this.db);
    const bySession = new Map(peers.map((p) => [p.sessionId, p]));
    const ids = [ROOT_SESSION, ...peers.map((p) => p.sessionId), ...[...this.workbenches.keys()].filter((id) => id !== ROOT_SESSION && !bySession.has(id))];
    const sessions = ids.map((id) => {
      const peer = bySession.get(id);
      const bench = this.workbenches.get(id);
      return {
        session_id: id,
        kind: id === ROOT_SESSION ? "root" : peer ? "peer" : "session",
        status: peer ? peer.status : "open",
        peer_id: peer?.id ?? null,
        opener_session_id: peer?.openerSessionId ?? null,
        generation: bench?.generation ?? null,
        state: bench ? (bench.worker?.state ?? "dead") : "not_started",
        running: bench?.live?.id ?? null,
        pending_inputs: pendingInputs(this.db, id).length,
      };
    });
    return { sessions, peers: peers.map((p) => ({ ...peerView(this.db, p), opener_session_id: p.openerSessionId })) };
  }

  /** Stop every worker (their whole trees) and close the log. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.aborts.abort();
    for (const timer of this.timers) clearTimeout(timer);
    const workers: Worker[] = [];
    for (const bench of this.workbenches.values()) if (bench.worker) workers.push(bench.worker);
    if (this.hooks.current) workers.push(this.hooks.current.worker);
    workers.push(...this.behaviour.strayWorkers());
    await Promise.allSettled([...workers.map((w) => w.shutdown()), this.remote.stop()]);
    // A turn still in a cell or a route call ends on its own now (workers gone, calls aborted) and writes nothing more.
    await this.turns?.settle();
    this.sqlite.close();
    this.releaseLock();
  }

  // ---- model turns ---------------------------------------------------------------------

  /** The session's workbench is up and its header pinned (a model turn's first request needs both). */
  async prepareSession(sessionId: string): Promise<void> {
    await this.ensureWorkbench(sessionId, "session_start");
  }

  /** Add a section to every frontier block written from now on (work items, candidates, peer requests ...). */
  addFrontierSection(provider: FrontierSectionProvider): void {
    this.frontierSections.push(provider);
  }

  /** The frontier block for a fold of a session through `coversThrough` (C12). */
  frontierBlock(sessionId: string, coversThrough: number): string {
    return frontierBlock(this.frontierSections, { db: this.db, sqlite: this.sqlite, sessionId, coversThrough });
  }

  /** frontier.select (C12): a frontier through the transcript's last record, installed by the next request. */
  frontierSelect(sessionId: string, executionId: string): unknown {
    // The selecting cell's own record (and its result) stays after the frontier: the model reads it after the fold.
    const own = this.sqlite.prepare("SELECT seq FROM transcript_records WHERE session_id = ? AND kind = 'cell' AND ref = ?").get(sessionId, executionId) as { seq: number } | undefined;
    const coversThrough = own
      ? ((this.sqlite.prepare("SELECT max(seq) AS seq FROM transcript_records WHERE session_id = ? AND seq < ?").get(sessionId, own.seq) as { seq: number | null }).seq ?? 0)
      : lastSeq(this.sqlite, sessionId);
    const row = recordFrontier(this.db, {
      id: newId("fr"),
      sessionId,
      coversThrough,
      block: this.frontierBlock(sessionId, coversThrough),
      reason: "selected",
      executionId,
      createdAtMs: this.now(),
    });
    return { frontier_id: row.id, covers_through: row.coversThrough, installs: "next_request" };
  }

  private turnHost(): TurnHost {
    const host = this;
    return {
      db: this.db,
      sqlite: this.sqlite,
      now: () => this.now(),
      newId: (prefix) => newId(prefix),
      notify: (n) => this.notify(n),
      execute: (code, sessionId, opts) => this.execute(code, sessionId, opts),
      interrupt: (executionId) => this.interrupt({ executionId }),
      prepareSession: (sessionId) => this.prepareSession(sessionId),
      frontierBlock: (sessionId, through) => this.frontierBlock(sessionId, through),
      observeInstructions: (sessionId) => void this.observeInstructions(sessionId),
      closed: (sessionId) => this.closedSessions.has(sessionId),
      signal: this.aborts.signal,
      get stopping() {
        return host.stopping;
      },
    };
  }

  // ---- internals ----------------------------------------------------------------------

  private async ensureWorkbench(sessionId: string, reason: string): Promise<Workbench> {
    let bench = this.workbenches.get(sessionId);
    if (!bench) {
      bench = new Workbench(sessionId);
      this.workbenches.set(sessionId, bench);
      // Start the first generation in the foreground slot: a concurrent first cell of the session
      // queues behind it instead of finding no worker and starting a second one.
      const release = await bench.acquire();
      try {
        await this.restartWorkbench(bench, reason);
      } finally {
        release();
      }
    }
    return bench;
  }

  /** Start a new workbench generation: re-index skills, materialize them, record kernel.reset and the header. */
  private async restartWorkbench(bench: Workbench, reason: string): Promise<void> {
    if (bench.worker && bench.worker.state !== "dead") await bench.worker.shutdown();
    const previous = lastKernelReset(this.db, bench.sessionId);
    const generation = `g-${(previous ? Number(previous.generation.replace(/^g-/, "")) || 0 : 0) + 1}`;
    const index = await this.skills.reindex();
    this.refuseWhenStopping(`workbench ${bench.sessionId}`);
    const worker = await this.keepUnlessStopping(startWorker({
      role: "workbench",
      sessionId: bench.sessionId,
      generation,
      command: [this.python, "-B", "-m", "klbr.worker"],
      pythonPath: [this.pythonDir],
      cwd: this.workspace,
      materialize: (dir: string) => this.skills.materialize(index, dir),
      expect: { revision: null, skills: index.revision },
      sandbox: this.sandbox.worker(),
      onHostReply: (event) => this.requestLog.replied(event),
      passEnv: this.passEnv,
      env: { [HOST_TREE_ENV]: this.hostTree },
      ...(this.options.interruptGraceMs !== undefined ? { interruptGraceMs: this.options.interruptGraceMs } : {}),
      ...(this.options.sigintGraceMs !== undefined ? { sigintGraceMs: this.options.sigintGraceMs } : {}),
    }), `workbench ${bench.sessionId}`);
    bench.worker = worker;
    bench.skills = index;
    noteRuntimeVersion(this.db, worker, { role: "workbench", sessionId: bench.sessionId }, this.now());
    const skills = (worker.hello as { skills?: string | null }).skills ?? null;
    recordKernelReset(this.db, { sessionId: bench.sessionId, generation, skillsRevision: skills, pid: worker.pid, reason, atMs: this.now() });
    this.headers.observeGeneration(bench.sessionId, (adopted) => this.skills.sources(index, adopted));
    this.notify({ type: "kernel.reset", session_id: bench.sessionId, generation, skills, at_ms: this.now() });
  }

  /** Serve one host request: scope first, then the handler; the request is logged now, its reply as sent. */
  private async serveRequest(bench: Workbench, request: HostRequest, ctx: HostRequestContext): Promise<unknown> {
    // The reply is logged when the supervisor reports what went out (RequestLog.replied).
    const rowId = this.requestLog.opened(ctx.executionId, ctx.requestId, request);
    try {
      const live = bench.inScope(ctx.executionId);
      if (!live) throw new ReplyError("scope_expired", `execution ${ctx.executionId} is not the live foreground cell of this generation`);
      try {
        this.observeInstructions(live.sessionId);
      } catch (error) {
        // A header that cannot be observed must not cost the cell its request; the incident says why.
        recordIncident(this.db, "header.observe_failed", { session_id: live.sessionId, error: String(error) }, this.now());
      }
      // The supervisor hands over a request it already validated (parseHostRequest): not parsed twice.
      const step = requestStep(this.db, ctx.executionId, rowId);
      const value = await dispatch({ host: this, live, requestId: ctx.requestId, step, signal: ctx.signal }, request as never);
      return value;
    } catch (error) {
      if (!(error instanceof ReplyError)) recordIncident(this.db, "request.internal_error", { method: canonicalName(request.method), error: String(error) }, this.now());
      throw error instanceof ReplyError ? error : new ReplyError("internal", (error as Error).message);
    }
  }

  /** Close the execution row from the completion; a yield the host never accepted is not a yield. */
  private recordCompletion(live: LiveExecution, completion: CellCompletion): ExecutionRow {
    const endedAtMs = this.now();
    const c = completion as CellCompletion & Record<string, unknown>;
    if (c.kind === "cell") {
      let status = c.status as ExecutionStatus;
      let error = (c.error as string | null) ?? null;
      if (status === "yielded" && !live.yielded) {
        status = "error";
        error = "the worker reported a yield the host never accepted";
      }
      return finishExecution(this.db, live.id, {
        status,
        output: c.output,
        truncatedBytes: c.truncated_bytes as number,
        error,
        endedBy: (c.endedBy as string | undefined) ?? (status === "interrupted" ? "message" : null),
        endedAtMs,
      })!;
    }
    return finishExecution(this.db, live.id, {
      status: "failed",
      error: String(c.error ?? "worker failure"),
      endedBy: (c.endedBy as string | undefined) ?? null,
      failure: { reason: c.reason ?? null, exit: c.exit ?? null, stderr_tail: (c.tails as { stderr?: string } | null)?.stderr ?? null },
      endedAtMs,
    })!;
  }

  private announceWakes(woken: WaitRow[], wokenBy: string): void {
    if (woken.length === 0) return;
    const bySession = new Map<string, string[]>();
    for (const wait of woken) {
      // The inputs go with the session's first wake only: a subscriber shows each input once.
      const inputs = bySession.has(wait.sessionId) ? [] : this.takePendingInputs(wait.sessionId);
      bySession.set(wait.sessionId, inputs);
      this.notify({ type: "wake", session_id: wait.sessionId, wait_id: wait.id, woken_by: wokenBy, at_ms: this.now(), inputs });
    }
  }

  /** The session's unconsumed inputs, framed as the model reads them (derived from the durable rows), now consumed. */
  takePendingInputs(sessionId: string): string[] {
    const pending = pendingInputs(this.db, sessionId);
    markConsumed(this.db, pending.map((e) => e.id), this.now());
    return pending.map((e) => frameInput({ source: e.source, received_at_ms: e.receivedAtMs, payload: e.payload as { text: string } }));
  }

  /** Start a hooks worker on a release and check that its hello names that release. */
  private async spawnHooks(release: { path: string; digest: string; epoch: number }): Promise<HooksGeneration> {
    this.refuseWhenStopping("hooks");
    const worker = await this.keepUnlessStopping(startWorker({
      role: "hooks",
      sessionId: ROOT_SESSION,
      generation: newId("h"),
      command: [this.python, "-B", "-m", "klbr.worker"],
      pythonPath: [this.pythonDir],
      cwd: this.workspace,
      sourceDir: release.path,
      expect: { revision: release.digest, skills: null },
      // The release lies in the data directory, which the sandbox hides: exactly it shows, read-only.
      sandbox: this.sandbox.worker([release.path]),
      passEnv: this.passEnv,
      env: { [HOST_TREE_ENV]: this.hostTree },
    }), "hooks");
    noteRuntimeVersion(this.db, worker, { role: "hooks", sessionId: ROOT_SESSION }, this.now());
    return {
      worker,
      revision: release.digest,
      epoch: release.epoch,
      path: release.path,
      hooks: this.behaviour.manifestHooks(release.path),
      pinnedBy: new Set(),
      retired: false,
    };
  }

  /** A stopped peer's session runs no cell again: its workbench would come back to life. */
  private refuseClosed(sessionId: string): void {
    if (this.closedSessions.has(sessionId)) throw new HostError("SESSION_STOPPED", `session ${sessionId} is stopped (peer.stop); it runs no more cells`);
  }

  private refuseWhenStopping(what: string): void {
    if (this.stopping) throw new HostError("HOST_STOPPING", `the host is stopping; no ${what} worker is started`);
  }

  /** A worker that came up after stop() collected the running ones would outlive the host: shut it down. */
  private async keepUnlessStopping(starting: Promise<Worker>, what: string): Promise<Worker> {
    const worker = await starting;
    if (!this.stopping) return worker;
    await worker.shutdown().catch(() => undefined);
    throw new HostError("HOST_STOPPING", `the host stopped while a ${what} worker started; it was shut down`);
  }

  private async retireHooks(gen: HooksGeneration): Promise<void> {
    await gen.worker.shutdown().catch(() => undefined);
  }
}

/** Operator input always wakes, whatever the hook said (C6); others follow a valid decision, or wake when there is none. */
export function effectiveAttention(source: string, hook: HookOutcome): { action: string; [k: string]: unknown } {
  if (source === "operator") return { action: "wake", priority: 100, forced: true };
  if (!hook.ok) return { action: "wake", priority: 50, reason: `attention hook unavailable: ${hook.reason}` };
  return hook.value as { action: string };
}

function report(row: ExecutionRow): ExecutionReport {
  return {
    id: row.id,
    session_id: row.sessionId,
    generation: row.generation,
    status: row.status,
    output: (row.output as ExecutionReport["output"]) ?? [],
    truncated_bytes: row.truncatedBytes ?? 0,
    error: row.error,
    ended_by: row.endedBy,
    failure: row.failure,
    started_at_ms: row.startedAtMs,
    ended_at_ms: row.endedAtMs,
  };
}
