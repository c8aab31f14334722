import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { resolvePython } from "@klbr/supervisor";
import type { HostDb } from "../db/open";
import { secureDataDir } from "../db/secure";
import type { Store } from "../store/api";
import { openHostLog, sqliteOf, type HostLog } from "../store/host-log";
import { dataLayout, defaultPythonDir, type DataLayout } from "../paths";
import type { HostServices, Notification } from "../requests/context";
import { HostSandbox } from "../sandbox/host-sandbox";
import { HostLimits } from "../limits/host-limits";
import { limitSettings, type LimitSettings } from "../limits/settings";
import { sandboxSettings } from "../sandbox/settings";
import { Cells, type CellOptions } from "./cells";
import { DisplayRecorder } from "./displays";
import type { ExecutionReport } from "./completion";
import { Frontiers } from "./frontiers";
import { HooksService } from "./hooks-service";
import { acquireHostLock } from "./host-lock";
import { newId, ROOT_SESSION } from "./ids";
import { InstructionHeaders } from "./instructions";
import { passEnvNames, sweepLeftovers } from "./leftovers";
import { HostLife } from "./lifecycle";
import { Notifier } from "./notifier";
import { peerRequestsSection } from "./peer-frontier";
import { PeerSignals } from "./peer-signals";
import { RemoteNamespaces } from "./remote-service";
import { RequestLog } from "./request-log";
import type { TurnHost } from "./session";
import { Sessions } from "./sessions";
import { SessionSkills, SkillsService } from "./skills-service";
import { Status } from "./status";
import { Turns } from "./turns";
import { Wakes } from "./wakes";
import { hostIdleCuller, workbenchPool, type IdleCuller } from "./host-culler";
import type { HostOptions } from "./host-options";
import { Workbenches } from "./workbenches";
import { leaseFence, leasingOf, sessionTurnHost, startWithLeases, storeWithLeases, type HostLeasing } from "./hosts/wire";
import { LiveOutputHub } from "./live-output";
import { WorkerLaunch } from "./worker-launch";
import { startHostTelemetry, type HostTelemetry } from "../telemetry";
import { databaseConnectionError } from "./database-errors";

/**
 * The composer: it opens the durable log, builds the services (hooks, workbenches, cells, wakes,
 * sessions, frontiers, status, remote namespaces, model turns), wires their notifications, and
 * starts and stops them in order. The operator's entry points below hand over to one service each.
 */
export class Host {
  readonly layout: DataLayout;
  readonly workspace: string;
  readonly dataDir: string;
  /** The database: SQLite (the embedded default) or PostgreSQL (C21), the store, leases and activation on it. */
  readonly log: HostLog;
  /** The one Store every service reads and writes through (C21: async, one API for both dialects). */
  readonly store: Store;
  readonly startedAtMs: number;
  /** The sandbox every worker and workspace.run command of this host runs in. */
  readonly sandbox: HostSandbox;
  readonly notifier = new Notifier();
  readonly life = new HostLife();
  readonly launch: WorkerLaunch;
  readonly hooks: HooksService;
  readonly skills: SkillsService;
  readonly headers: InstructionHeaders;
  readonly requestLog: RequestLog;
  readonly workbenches: Workbenches;
  /** Idle culling (C19), when the host has an idle timeout. */
  readonly culler: IdleCuller | null;
  readonly cells: Cells;
  readonly wakes: Wakes;
  readonly sessions: Sessions;
  readonly frontiers: Frontiers;
  readonly views: Status;
  /** In-cell waits on peer requests. */
  readonly peerSignals = new PeerSignals();
  /** Remote namespaces over ssh (C14). */
  readonly remote: RemoteNamespaces;
  /** C16 live output: cells' output to the clients that watch it, stored nowhere; null when off. */
  readonly liveOutput: LiveOutputHub | null;
  /** The model turns, when this host drives sessions. */
  turns: Turns | null = null;
  /** Trace export (C18), when the environment asks for it: it follows the notifications. */
  telemetry: HostTelemetry | null = null;
  /** What request handlers see. */
  readonly services: HostServices;
  /** The resource limits asked for (C17), resolved before anything starts. */
  private readonly limitSettings: LimitSettings;
  /** Many hosts, one log (C21): registration, heartbeat, session leases, failover; null without leases. */
  readonly leasing: HostLeasing | null;
  /** The limits mechanism in force, set up by start() before the first worker. */
  limits: HostLimits | null = null;
  private readonly releaseLock: () => void;

  private constructor(private readonly options: HostOptions) {
    const passEnv = passEnvNames(options.passEnv);
    this.layout = dataLayout(resolve(options.dataDir), options.database === undefined ? undefined : resolve(options.database));
    this.dataDir = this.layout.dataDir;
    this.workspace = resolve(options.workspace ?? process.cwd());
    const pythonDir = options.pythonDir ?? defaultPythonDir();
    const python = options.python ?? resolvePython();
    this.limitSettings = limitSettings({ ...(options.limits !== undefined ? { limit: options.limits } : {}), ...(options.limitsMechanism !== undefined ? { mechanism: options.limitsMechanism } : {}) });
    const tmpBytes = this.limitSettings.limits.tmpBytes;
    this.sandbox = new HostSandbox({ ...sandboxSettings({ sandbox: options.sandbox, network: options.network }), ...(tmpBytes !== undefined ? { tmpBytes } : {}) }, { workspace: this.workspace, dataDir: this.dataDir, controlSocket: this.layout.controlSocket, pythonDir, python });
    for (const dir of [this.dataDir, this.layout.releases, this.layout.managedSkills]) mkdirSync(dir, { recursive: true, mode: 0o700 });
    secureDataDir(this.dataDir);
    this.releaseLock = acquireHostLock(this.layout.lock);
    try {
      this.log = openHostLog({ sqliteFile: this.layout.database, ...(options.postgres ? { postgres: options.postgres } : {}), fence: options.fence ?? leaseFence(this), onConnectionError: (error) => databaseConnectionError(options, error) });
      const store = this.log.store;
      // Without leases no write can be LEASE_LOST: the store as it is, no wrapper on the turn loop's every call.
      this.store = options.leaseMs === undefined ? store : storeWithLeases(store, this);
    } catch (error) {
      this.releaseLock();
      throw error;
    }
    this.startedAtMs = this.now();
    const { life } = this;
    const now = () => this.now();
    const notify = (n: Notification) => this.notifier.notify(n);
    const { interruptGraceMs, sigintGraceMs } = options;
    const liveOutput = (this.liveOutput = options.liveOutput === false ? null : new LiveOutputHub());
    this.launch = new WorkerLaunch({ python, pythonDir, workspace: this.workspace, sandbox: this.sandbox, passEnv, interruptGraceMs, sigintGraceMs, liveOutput: liveOutput !== null, display: options.display !== false });
    const displays = new DisplayRecorder({ store: this.store, now, publish: liveOutput ? (event) => liveOutput.publishDisplay(event) : null });
    this.hooks = new HooksService({ activation: this.log.activation, store: this.store, now, notify, life, launch: this.launch, releasesDir: this.layout.releases, defaultSource: join(pythonDir, "klbr_hooks") });
    this.skills = new SkillsService({ builtinDir: options.builtinSkillsDir ?? process.env.KLBR_SKILLS_DIR ?? join(this.workspace, "skills"), managedDir: this.layout.managedSkills });
    this.headers = new InstructionHeaders(this.store, now);
    const requestLog = (this.requestLog = new RequestLog(this.store, now));
    this.remote = new RemoteNamespaces({ store: this.store, dataDir: this.dataDir, pythonDir, now, newId, liveOutput, displays, ...this.launch.graces(), limits: this.limitSettings.limits });
    this.workbenches = new Workbenches({ store: this.store, now, notify, life, launch: this.launch, skills: this.skills, headers: this.headers, onHostReply: (event) => void requestLog.replied(event), mayStart: (sessionId) => !this.leasing?.lost(sessionId), spares: options.spares ?? 0, ...(options.bytecodeCache !== undefined ? { bytecodeDir: options.bytecodeCache || null } : {}), ...(options.startConcurrency !== undefined ? { startConcurrency: options.startConcurrency } : {}) });
    this.culler = options.idleTimeoutMs === undefined ? null : hostIdleCuller(this, options.idleTimeoutMs);
    this.wakes = new Wakes({ store: this.store, now, notify, life, hooks: this.hooks, ...(options.leaseMs !== undefined ? { gate: (sessionId: string) => this.leasing!.claim(sessionId) } : {}) });
    const turnOf = (sessionId: string) => this.turns?.turnOf(sessionId) ?? null;
    this.sessions = new Sessions({ now, notify, life, workbenches: this.workbenches, skills: this.skills, headers: this.headers, turnOf });
    this.frontiers = new Frontiers({ store: this.store, now, newId });
    this.frontiers.addSection(peerRequestsSection());
    this.views = new Status({ store: this.store, dataDir: this.dataDir, workspace: this.workspace, startedAtMs: this.startedAtMs, now, sandbox: this.sandbox, limits: () => this.limits, hooks: this.hooks, workbenches: this.workbenches, skills: this.skills, turns: () => this.turns, remote: this.remote, pool: () => workbenchPool(this.workbenches, this.culler, options.idleTimeoutMs), liveOutput: liveOutput !== null });
    this.services = this.requestServices();
    const observeInstructions = async (sessionId: string) => void (await this.headers.observeOutside(sessionId));
    this.leasing = leasingOf(this, options);
    this.cells = new Cells({ store: this.store, now, newId, notify, life, workbenches: this.workbenches, hooks: this.hooks, requestLog, liveOutput, displays, observeInstructions, services: () => this.services });
  }

  /** Start a host: migrate, recover, start the hooks worker and the root workbench (whose start indexes the skills). */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      // PostgreSQL's migrations, under the advisory lock, before anything reads the log.
      await host.log.ready();
      if (options.telemetry !== false) {
        host.telemetry = startHostTelemetry({ store: host.store, route: () => host.turns?.route ?? null, subscribe: (l) => host.subscribe(l) }, options.telemetry ?? {});
      }
      host.launch.hostTree = (await sweepLeftovers(host.dataDir)).tag;
      await host.sandbox.check();
      // Before any worker: limits that cannot be applied refuse the start (LIMITS_UNAVAILABLE).
      host.limits = HostLimits.prepare(host.limitSettings, host.sandbox.settings);
      host.launch.limits = host.limits.mechanism;
      if (options.drive) host.turns = new Turns(host.turnHost(), host.layout.routes, options.drive === true ? {} : options.drive);
      // With other hosts alive on the database (C21), sessions are recovered one by one as they are claimed.
      const whole = await startWithLeases(host);
      for (const sessionId of await host.store.stoppedPeerSessions()) host.workbenches.markClosed(sessionId);
      // Once per runtime version: later starts find it built (a failure is an incident, workers compile as before).
      await host.workbenches.prepareBytecode();
      await host.hooks.start();
      if (!host.leasing || (await host.leasing.claim(ROOT_SESSION))) await host.workbenches.ensure(ROOT_SESSION, "host_start");
      void host.workbenches.spares.fill();
      host.culler?.start();
      const turns = host.turns;
      if (turns) {
        host.subscribe((n) => turns.follow(n));
        await turns.resume(whole);
      }
      return host;
    } catch (error) {
      await host.stop();
      throw error;
    }
  }

  /** Stop every worker (their whole trees) and close the log. */
  async stop(): Promise<void> {
    if (!this.life.beginStop()) return;
    this.wakes.stop();
    this.culler?.stop();
    await this.workbenches.spares.stop();
    this.workbenches.runtime.close();
    const workers = [...this.workbenches.workers(), ...this.hooks.workers()];
    await Promise.allSettled([...workers.map((w) => w.shutdown()), this.remote.stop()]);
    // A turn still in a cell or a route call ends on its own now (workers gone, calls aborted) and writes nothing more.
    await this.turns?.settle();
    // Spans are built from the log, so before it closes; the flush is bounded (a collector that is down never holds the stop).
    await this.telemetry?.close(this.now());
    await this.limits?.close();
    await this.leasing?.stop();
    await this.log.close();
    this.releaseLock();
  }

  /** The SQLite log's drizzle handle (embedded tests read it); STORE_NOT_SQLITE on PostgreSQL. */
  get db(): HostDb {
    return sqliteOf(this.log).db;
  }

  /** The SQLite log's connection; STORE_NOT_SQLITE on PostgreSQL. */
  get sqlite(): Database.Database {
    return sqliteOf(this.log).sqlite;
  }

  /** Whether stop() began. */
  get stopping(): boolean {
    return this.life.stopping;
  }

  /** The host clock. */
  now(): number {
    return this.options.now?.() ?? Date.now();
  }

  // ---- the operator's entry points (the control socket, the CLI, embedded hosts) ----------

  /** Run one cell in a session's workbench (see Cells.execute). */
  async execute(code: string, sessionId: string = ROOT_SESSION, opts: CellOptions = {}): Promise<ExecutionReport> {
    await this.leasing?.hold(sessionId);
    return this.cells.execute(code, sessionId, opts);
  }

  /** A cell too large to run, known by its size alone (see Cells.refuse). */
  refuseCell(sessionId: string, bytes: number): Promise<never> {
    return this.cells.refuse(sessionId, bytes);
  }

  /** Interrupt a running or queued cell (see Cells.interrupt). */
  interrupt(target: { executionId?: string; sessionId?: string }): Promise<unknown> {
    return this.cells.interrupt(target);
  }

  /** Operator (or classified external) input (see Wakes.postInput). */
  async postInput(text: string, opts: { source?: string; sessionId?: string } = {}): Promise<{ event_id: number; attention: unknown }> {
    await this.leasing?.hold(opts.sessionId ?? ROOT_SESSION);
    return this.wakes.postInput(text, opts);
  }

  /** `klbr status` (see Status.status). */
  async status(): Promise<unknown> {
    return { ...((await this.views.status()) as Record<string, unknown>), telemetry: this.telemetry?.status() ?? null };
  }

  /** `klbr status` over the control socket: with leases, also the hosts sharing the database and the sessions each holds (C21). */
  async statusReply(): Promise<unknown> {
    return { ...((await this.status()) as Record<string, unknown>), ...(await this.leasing?.status()) };
  }

  /** Subscribe to notifications; returns the unsubscribe function. */
  subscribe(listener: (n: Notification) => void): () => void {
    return this.notifier.subscribe(listener);
  }

  // ---- wiring ----------------------------------------------------------------------------

  /** What request handlers see: the basics and one view per service. */
  private requestServices(): HostServices {
    const launch = this.launch;
    return {
      workspace: this.workspace,
      dataDir: this.dataDir,
      store: this.store,
      sandbox: this.sandbox,
      get limitsMechanism() {
        return launch.limits;
      },
      now: () => this.now(),
      baseEnv: () => this.launch.baseEnv(),
      newId,
      notify: (n) => this.notifier.notify(n),
      hooks: this.hooks,
      skills: new SessionSkills(this.skills, this.workbenches),
      instructions: this.headers,
      wakes: this.wakes,
      sessions: this.sessions,
      status: this.views,
      frontiers: this.frontiers,
      peerSignals: this.peerSignals,
      remote: this.remote,
    };
  }

  /** What one session's turn loop uses. */
  private turnHost(): TurnHost {
    const { life, leasing } = this;
    const base: TurnHost = {
      store: this.store,
      now: () => this.now(),
      newId: (prefix) => newId(prefix),
      notify: (n) => this.notifier.notify(n),
      execute: (code, sessionId, opts) => this.cells.execute(code, sessionId, { ...opts, origin: "model" }),
      interrupt: (executionId) => this.cells.interrupt({ executionId }),
      prepareSession: (sessionId) => this.sessions.prepare(sessionId),
      frontierBlock: (sessionId, through) => this.frontiers.block(sessionId, through),
      observeInstructions: async (sessionId) => void (await this.headers.observeOutside(sessionId)),
      closed: (sessionId) => this.workbenches.closed(sessionId),
      signal: life.signal,
      get stopping() {
        return life.stopping;
      },
      ...(leasing ? { claim: (sessionId: string) => leasing.claim(sessionId), forSession: (sessionId: string) => sessionTurnHost(base, leasing, sessionId) } : {}),
    };
    return base;
  }
}
