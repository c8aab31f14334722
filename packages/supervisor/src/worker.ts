import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import type { Server } from "node:net";
import { CellSlot } from "./cells.js";
import { clearRemains, DeathNotice } from "./death.js";
import type { CellCompletion, ExitInfo, HookCompletion, InterruptOutcome, WorkerExit } from "./completion.js";
import { SupervisorError, type OutputTails } from "./errors.js";
import { FrameLoop } from "./frame-loop.js";
import { acceptHello, Handshake } from "./handshake.js";
import { HookCalls } from "./hooks.js";
import { HostRequests } from "./host-requests.js";
import { WorkerIdentity } from "./identity.js";
import { CellDisplays } from "./display.js";
import { LiveOutputs } from "./live-output.js";
import { TreeKiller } from "./killer.js";
import { climbLadder, interruptOnAbort, sigintWorker, type AnyOperation } from "./ladder.js";
import { launchCommand, launchWorker, type LaunchPlace } from "./launch.js";
import { limitStop, stopAfterDeath } from "./limit-stop.js";
import type { CellUsage, WorkerLimits } from "./limits/index.js";
import { IDENTIFIER, Operation } from "./operation.js";
import { resolveConfig, type ExecuteOptions, type StartWorkerOptions, type Worker, type WorkerConfig, type WorkerRole, type WorkerState } from "./options.js";
import { removePrivateDir } from "./private-dir.js";
import { hostFailure, messageOf, type StopInfo, type StopKind } from "./records.js";
import { workerRoutes } from "./routes.js";
import type { NamespaceProcs, PinnedProc } from "./sandbox.js";
import type { SpawnedWorker } from "./spawn.js";
import { ByteTail } from "./tail.js";
import { merged } from "./merged.js";
import { treeTag } from "./tagged.js";
import { rememberBelow, type KnownProcs } from "./tree.js";
import type { HelloMessage, HookInput, HookSlot, InboundMessage } from "./wire.js";

/** Remove a file if it is there (the worker removes its skills file itself; this is the backstop). */
function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long a worker that closed its connection has to exit before its tree is killed: its guard
 * clears what the worker left and then exits with the worker's own status, which a kill would hide.
 */
const GUARD_EXIT_GRACE_MS = 1000;

/**
 * How long after the guard's exit its status pipe may take to end (it ends as the guard exits):
 * past it, the guard's sweep counts as not reported, and the host searches for the tree itself.
 */
const GUARD_REPORT_WAIT_MS = 100;

/**
 * The Worker implementation; one instance per spawned process. It composes the phases, each a
 * module of its own: the launch (launch.ts: the command, the guard, the environment handoff and
 * the limits' guard options, over spawn.ts), a spare's identity (identity.ts), the handshake
 * (handshake.ts), the connection and its frame loop (frame-loop.ts) with one route per message
 * kind (routes.ts: host requests, completions, live output), cells (cells.ts), host requests
 * (host-requests.ts), hook calls (hooks.ts), the interrupt ladder (ladder.ts), the tree kill
 * (killer.ts), a limit as the stop reason (limit-stop.ts) and the death notice (death.ts); what
 * is left here is the lifecycle: the phase, the stop reason and the order of the steps.
 */
export class WorkerProcess implements Worker {
  readonly role: WorkerRole;
  readonly #identity: WorkerIdentity;
  readonly #opts: StartWorkerOptions;
  readonly #config: WorkerConfig;
  /** The private dir and socket, the token, the tree tag and the skills file of the launch. */
  readonly #place: LaunchPlace;
  readonly #server: Server;
  /** The skills file `materialize` wrote into the private dir (deleted after the hello). */
  readonly #materialized: string | undefined;
  /** The generation's group or rlimits, its CPU watch and its cells' accounting (C17). */
  readonly #limits: WorkerLimits;
  readonly #stdout = new ByteTail();
  readonly #stderr = new ByteTail();
  readonly #known: KnownProcs = new Map();
  readonly #death = new DeathNotice();
  readonly #handshake = new Handshake(() => this.#loop.close());
  readonly #cells = new CellSlot();
  readonly #hooks: HookCalls;
  readonly #requests: HostRequests;
  /** C16: the sequence rules of `output` and the running cell's listener (hooks never negotiate it). */
  readonly #live: LiveOutputs;
  /** C20: the sequence rules of `display` and the running cell's listener (hooks never negotiate it). */
  readonly #displays: CellDisplays;
  /** The connection: the hello to the handshake, then each message to its kind's route. */
  readonly #loop: FrameLoop;
  #spawned: SpawnedWorker | undefined;
  #killer: TreeKiller | undefined;
  #hello: HelloMessage | undefined;
  #phase: "starting" | "running" | "stopping" | "dead" = "starting";
  #stop: StopInfo | undefined;
  #exit: ExitInfo | undefined;
  #seq = 0;
  #shutdownTimer: NodeJS.Timeout | undefined;
  /** The namespace init and the worker under it, when the sandbox gives the worker a pid namespace. */
  #ns: NamespaceProcs | undefined;
  /** The guard's one child: the worker command itself (or its sandbox wrapper), pinned by start time. */
  #inner: PinnedProc | undefined;

  constructor(opts: StartWorkerOptions, dir: string, socketPath: string, server: Server, materialized: string | undefined, limits: WorkerLimits) {
    this.#limits = limits;
    this.#opts = opts;
    this.role = opts.role;
    this.#identity = new WorkerIdentity(opts.sessionId, opts.generation, opts.spare === true);
    this.#config = resolveConfig(opts);
    this.#live = new LiveOutputs(opts.liveOutput === true && opts.role === "workbench");
    this.#displays = new CellDisplays(opts.display === true && opts.role === "workbench");
    // The tag is inherited by every process of this generation: found and killed even after leaving the tree.
    const tag = treeTag();
    this.#place = { dir, socketPath, token: randomBytes(32).toString("hex"), tag, skillsFile: materialized ?? opts.skillsFile };
    this.#server = server;
    this.#materialized = materialized;
    const invalidate = (reason: string, detail: string) => this.#invalidate(reason, detail);
    const scope = {
      role: this.role,
      config: this.#config,
      running: () => this.#phase === "running",
      cell: () => this.#cells.run,
      channel: () => this.#loop.channel,
      invalidate,
    };
    this.#hooks = new HookCalls(scope);
    this.#requests = new HostRequests(scope, opts);
    const shuttingDown = () => this.#stop?.kind === "shutdown";
    this.#loop = new FrameLoop({
      identity: this.#identity,
      handshake: this.#handshake,
      routes: workerRoutes({ requests: this.#requests, cells: this.#cells, hooks: this.#hooks, live: this.#live, displays: this.#displays, shuttingDown, invalidate }),
      starting: () => this.#phase === "starting",
      // While a graceful shutdown runs, a worker may still complete what it was doing.
      reading: () => this.#phase === "running" || (this.#phase === "stopping" && shuttingDown()),
      shuttingDown,
      hello: (message) => this.#onHello(message),
      invalidate,
    });
  }

  get sessionId(): string {
    return this.#identity.sessionId;
  }

  get generation(): string {
    return this.#identity.generation;
  }

  get exited(): Promise<WorkerExit> {
    return this.#death.exited;
  }

  /** The worker command's pid (the guard's child); the guard's own until the guard reported it. */
  get pid(): number {
    return this.#inner?.pid ?? this.#guardPid;
  }

  get #guardPid(): number {
    return this.#spawned?.pid ?? 0;
  }

  get hello(): HelloMessage {
    if (!this.#hello) throw new SupervisorError("WORKER_PROTOCOL", "the worker has not said hello yet");
    return this.#hello;
  }

  get state(): WorkerState {
    if (this.#phase === "dead") return "dead";
    if (this.#phase === "stopping" || this.#phase === "starting") return "stopping";
    return this.#cells.run || this.#hooks.inFlight ? "busy" : "ready";
  }

  get stdoutTail(): string {
    return this.#stdout.text();
  }

  get stderrTail(): string {
    return this.#stderr.text();
  }

  #tails(): OutputTails {
    return { stdout: this.#stdout.text(), stderr: this.#stderr.text() };
  }

  // ---- start and handshake ----

  async start(): Promise<void> {
    await this.launch();
    await this.handshake();
  }

  /**
   * A spare's identity (spare.ts), given once before its handshake: every envelope from here on
   * names this session and generation, and the worker reads them as one line of its stdin.
   */
  bindIdentity(sessionId: string, generation: string): void {
    const waiting = this.#phase === "starting" && !this.#hello;
    this.#identity.bind(sessionId, generation, waiting ? this.#spawned?.control : undefined, this.#guardPid);
  }

  /** Spawn the worker under the guard (a spare then waits for {@link bindIdentity} before it connects). */
  async launch(): Promise<void> {
    const command = launchCommand(this.#opts, this.#place);
    this.#loop.listen(this.#server);
    const spawned = launchWorker(command, {
      opts: this.#opts,
      place: this.#place,
      known: this.#known,
      stdout: this.#stdout,
      stderr: this.#stderr,
      limits: this.#limits,
      tails: () => this.#tails(),
      onInner: (inner) => (this.#inner ??= inner),
      onStartFailed: (error) => this.#handshake.fail(error),
      onExit: (code, signal) => {
        this.#exit = { code, signal };
        void this.#onProcessExit();
      },
    });
    if ("failed" in spawned) {
      const { message, cause } = await spawned.failed;
      this.#server.close();
      await removePrivateDir(this.#place.dir);
      await this.#limits.release();
      this.#phase = "dead";
      this.#death.announce({ code: null, signal: null, reason: "spawn_failed", tails: this.#tails() });
      throw new SupervisorError("WORKER_SPAWN_FAILED", message, { cause });
    }
    this.#spawned = spawned;
    this.#killer = new TreeKiller(spawned.pid, this.#known, this.#place.tag, () => this.#ns);
  }

  /** Wait for the hello (see {@link launch}); then the socket and the skills file are removed. */
  async handshake(): Promise<void> {
    await this.#awaitHello();
    // Unlinked synchronously (two short system calls): through the thread pool, behind whatever
    // else the host has queued there (a replacement spare's skill reads...), this wait was most of
    // a warm spare's bind on a loaded machine.
    unlinkQuietly(this.#place.socketPath);
    if (this.#materialized !== undefined) unlinkQuietly(this.#materialized);
  }

  /** Wait for the hello; on failure stop the tree and throw the failure with the output tails. */
  async #awaitHello(): Promise<void> {
    const timeoutMs = this.#config.handshakeTimeoutMs;
    this.#handshake.armTimeout(
      timeoutMs,
      () => new SupervisorError("WORKER_HANDSHAKE_TIMEOUT", `no valid hello within ${timeoutMs} ms from pid ${this.#guardPid}`, { tails: this.#tails() }),
    );
    try {
      await this.#handshake.ready;
    } catch (err) {
      await this.#stopTree(err instanceof SupervisorError ? `handshake:${err.code}` : "handshake", messageOf(err), "invalidated");
      await this.exited;
      if (err instanceof SupervisorError && err.tails === undefined) {
        throw new SupervisorError(err.code, err.message, { cause: err.cause, tails: this.#tails() });
      }
      throw err;
    } finally {
      this.#handshake.disarm();
    }
  }

  /** The first message: accepted as the hello, the worker runs; anything else fails the handshake. */
  #onHello(message: InboundMessage): void {
    try {
      const accepted = acceptHello(message, {
        token: this.#place.token,
        role: this.role,
        expect: this.#opts.expect,
        pid: this.#guardPid,
        inner: this.#inner,
        pidNamespace: this.#opts.sandbox?.pidNamespace === true,
      });
      this.#inner = accepted.inner;
      this.#ns = accepted.ns;
      this.#hello = accepted.hello;
    } catch (err) {
      this.#handshake.fail(err as SupervisorError);
      return;
    }
    // Measured and watched from here: the worker process is known (under a sandbox, the one inside).
    const guard = this.#guardPid;
    this.#limits.running(() => this.#ns?.worker.pid ?? this.#inner?.pid, () => (this.#exit === undefined ? guard : undefined), this.#opts.transport !== undefined, (verdict) => {
      const stop = limitStop(verdict);
      void this.#stopTree(stop.reason, stop.detail, stop.kind);
    });
    // Running from this message on: anything after it in the same chunk is an ordinary message.
    this.#phase = "running";
    this.#handshake.succeed();
  }

  // ---- operations ----

  async execute(code: string, opts: ExecuteOptions = {}): Promise<CellCompletion> {
    if (this.role !== "workbench") throw new SupervisorError("WORKER_WRONG_ROLE", `execute needs a workbench worker, pid ${this.#guardPid} is ${this.role}`);
    if (this.#phase !== "running") throw new SupervisorError("WORKER_DEAD", `worker pid ${this.#guardPid} is ${this.state}`, { tails: this.#tails() });
    const running = this.#cells.run;
    if (running) throw new SupervisorError("WORKER_BUSY", `worker pid ${this.#guardPid} is running cell ${JSON.stringify(running.op.id)}`);
    const id = opts.id ?? `c-${++this.#seq}`;
    if (!IDENTIFIER.test(id)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `execution id ${JSON.stringify(id)} is not an identifier`);
    const cell = new Operation<CellCompletion>(id);
    // Its counters start before it is sent (see cellBegin): the worker may run it before the host runs again.
    this.#limits.cellBegin();
    try {
      this.#loop.channel!.sendExecute(id, code);
    } catch (err) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `cell ${JSON.stringify(id)} cannot be sent: ${messageOf(err)}`, { cause: err });
    }
    this.#cells.begin(cell, opts.onHostRequest);
    this.#live.started(id, opts.onOutput);
    this.#displays.started(id, opts.onDisplay);
    if (opts.signal) interruptOnAbort(opts.signal, cell, () => void this.interrupt(id));
    // Read as the completion settles, before the exit path removes a dead worker's group.
    return cell.promise.then((completion) => merged(completion, { usage: this.#limits.cellEnd() }));
  }

  async invoke<S extends HookSlot>(slot: S, input: HookInput<S>, opts: { id?: string } = {}): Promise<HookCompletion<S>> {
    if (this.role !== "hooks") throw new SupervisorError("WORKER_WRONG_ROLE", `invoke needs a hooks worker, pid ${this.#guardPid} is ${this.role}`);
    const id = opts.id ?? `h-${++this.#seq}`;
    if (!IDENTIFIER.test(id)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `invoke id ${JSON.stringify(id)} is not an identifier`);
    if (this.#hooks.has(id)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `invoke id ${JSON.stringify(id)} is already pending`);
    const op = new Operation<HookCompletion>(id);
    if (this.#phase !== "running") op.settle(hostFailure(op, "worker_dead", `worker pid ${this.#guardPid} is ${this.state}`));
    else this.#hooks.submit(op, slot, input);
    return op.promise as Promise<HookCompletion<S>>;
  }

  async interrupt(id: string): Promise<InterruptOutcome> {
    const op: AnyOperation | undefined = this.#cells.find(id) ?? (this.#hooks.inFlight?.op.id === id ? this.#hooks.inFlight.op : undefined);
    if (!op || op.ended || this.#phase !== "running") return { rung: "not_running" };
    op.ladder ??= climbLadder(op, {
      config: this.#config,
      sendInterrupt: (opId) => this.#loop.channel?.sendInterrupt(opId),
      sigint: () =>
        sigintWorker({ control: this.#spawned?.control, exited: this.#exit !== undefined, ns: this.#ns, inner: this.#inner, pid: this.#guardPid }),
      hardStop: (detail) => this.#stopTree("interrupt_escalated", detail, "requested"),
    });
    return op.ladder;
  }

  async shutdown(): Promise<WorkerExit> {
    if (this.#phase !== "running") return this.exited;
    this.#phase = "stopping";
    this.#stop = { reason: "shutdown", detail: "the host asked the worker to exit", kind: "shutdown" };
    rememberBelow(this.#guardPid, this.#known);
    try {
      this.#loop.channel?.send({ kind: "shutdown" });
    } catch {
      // the exit path or the timer below finishes the job.
    }
    this.#shutdownTimer = setTimeout(() => {
      // A hard stop or an invalidation since the shutdown keeps its own reason.
      if (this.#stop?.kind === "shutdown") {
        this.#stop = { reason: "shutdown_timeout", detail: `the worker did not exit within ${this.#config.shutdownGraceMs} ms`, kind: "shutdown" };
      }
      void this.#killer?.kill();
    }, this.#config.shutdownGraceMs);
    return this.exited;
  }

  async hardStop(reason: string): Promise<WorkerExit> {
    await this.#stopTree(reason, "the host hard-stopped the worker", "requested");
    return this.exited;
  }

  usage(): CellUsage {
    return this.#limits.totals();
  }

  onDeath(listener: (exit: WorkerExit) => void): () => void {
    return this.#death.subscribe(listener, this.#phase === "dead");
  }

  // ---- stopping and death ----

  /** Invalidate the generation: never read again, stop the tree, fail every pending operation. */
  #invalidate(reason: string, detail: string): void {
    void this.#stopTree(reason, detail, "invalidated", reason === "worker_exited" ? GUARD_EXIT_GRACE_MS : 0);
  }

  async #stopTree(reason: string, detail: string, kind: StopKind, exitGraceMs = 0): Promise<void> {
    if (this.#phase === "dead") return;
    if (!this.#stop || this.#stop.kind === "shutdown") this.#stop = { reason, detail, kind };
    if (this.#phase !== "starting") this.#phase = "stopping";
    // Without a grace the tree is frozen and killed (killTree's first pass is synchronous) before
    // the connection closes: the worker takes that EOF as its end and, on a busy machine, could
    // otherwise exit on its own first, a hard stop then recorded as a clean exit (code 0).
    const killing = exitGraceMs > 0 ? undefined : this.#killer?.kill();
    this.#loop.close();
    this.#server.close();
    if (exitGraceMs === 0) {
      await killing;
      return;
    }
    await Promise.race([this.#spawned?.exitSeen, sleep(exitGraceMs)]);
    // Exited in time: the exit path (#onProcessExit) clears what is left, searching only when the
    // guard did not report a clean sweep.
    if (this.state === "dead" || this.#exit !== undefined) return;
    await this.#killer?.kill();
  }

  /** Runs once, on the process's `exit` event. */
  async #onProcessExit(): Promise<void> {
    clearTimeout(this.#shutdownTimer);
    // Let the connection deliver what the worker wrote before it died, so the first fault names the cause.
    for (let i = 0; i < 20 && this.#loop.channel && !this.#loop.channel.closed; i++) await sleep(1);
    const stop = this.#stop ?? { reason: "worker_exited", detail: "the worker process exited", kind: "invalidated" };
    // A death the host did not ask for: a limit, when the mechanism recorded one, is its reason (C17).
    this.#stop = stopAfterDeath(stop, () => this.#limits.verdict({ code: this.#exit?.code ?? null, signal: this.#exit?.signal ?? null }));
    if (this.#phase === "running") this.#phase = "stopping";
    this.#loop.close();
    this.#server.close();
    // A guard that said its sweep left nothing (its status pipe ends as it exits) leaves no
    // process to look for: the searches below read every process on the machine, which at
    // hundreds of workbenches made each exit cost the host tens of milliseconds.
    const clean = await Promise.race([this.#spawned?.guardClean ?? false, sleep(GUARD_REPORT_WAIT_MS).then(() => false)]);
    // Otherwise one synchronous pass now; settle the pending operations as soon as the tails are
    // in; confirm all of it is gone before `exited`.
    if (!clean) this.#killer?.killOnce();
    await Promise.race([this.#spawned?.stdioClosed, sleep(50)]);
    const exit = this.#settleAll();
    // shutdown() may have armed its timer while the connection was drained above.
    clearTimeout(this.#shutdownTimer);
    await clearRemains({ pid: this.#guardPid, dir: this.#place.dir, killer: clean ? undefined : this.#killer, streams: this.#spawned?.streams ?? [] });
    await this.#limits.release();
    this.#death.announce(exit);
  }

  /** Mark the worker dead and settle every pending operation from the host's own observation. */
  #settleAll(): WorkerExit {
    const stop = this.#stop!;
    const exit: WorkerExit = { code: this.#exit?.code ?? null, signal: this.#exit?.signal ?? null, reason: stop.reason, detail: stop.detail, tails: this.#tails() };
    this.#phase = "dead";
    this.#handshake.fail(
      new SupervisorError("WORKER_EXITED_EARLY", `worker pid ${this.#guardPid} exited (code ${exit.code}, signal ${exit.signal}) before a valid hello`, {
        tails: exit.tails,
      }),
    );
    this.#cells.endOnDeath(stop, exit);
    this.#hooks.failAll(stop, exit);
    return exit;
  }
}
