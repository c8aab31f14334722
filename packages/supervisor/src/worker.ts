import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import type { Server, Socket } from "node:net";
import { CellSlot } from "./cells.js";
import { Channel } from "./channel.js";
import { workerCommand } from "./command.js";
import { clearRemains, DeathNotice } from "./death.js";
import type { CellCompletion, ExitInfo, HookCompletion, InterruptOutcome, WorkerExit } from "./completion.js";
import { SupervisorError, type OutputTails } from "./errors.js";
import { acceptHello, Handshake } from "./handshake.js";
import { HookCalls } from "./hooks.js";
import { HostRequests } from "./host-requests.js";
import { LiveOutputs } from "./live-output.js";
import { dispatchInbound, type InboundOf, type InboundRoutes } from "./inbound.js";
import { TreeKiller } from "./killer.js";
import { climbLadder, interruptOnAbort, sigintWorker, type AnyOperation } from "./ladder.js";
import { IDENTIFIER, Operation } from "./operation.js";
import { resolveConfig, type ExecuteOptions, type StartWorkerOptions, type Worker, type WorkerConfig, type WorkerRole, type WorkerState } from "./options.js";
import { removePrivateDir } from "./private-dir.js";
import { hostFailure, messageOf, type StopInfo, type StopKind } from "./records.js";
import { wrapCommand, type NamespaceProcs, type PinnedProc } from "./sandbox.js";
import { launcherEnv, tagsIn } from "./guard-launch.js";
import { spawnGuarded, type SpawnedWorker } from "./spawn.js";
import { ByteTail } from "./tail.js";
import type { CellUsage, WorkerLimits } from "./limits/index.js";
import { treeTag } from "./tagged.js";
import { rememberTree, type KnownProcs } from "./tree.js";
import type { HelloMessage, HookInput, HookSlot, InboundMessage } from "./wire.js";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a worker that closed its connection before hello has to exit (then WORKER_EXITED_EARLY). */
const EOF_EXIT_GRACE_MS = 2000;

/**
 * How long a worker that closed its connection has to exit before its tree is killed: its guard
 * clears what the worker left and then exits with the worker's own status, which a kill would hide.
 */
const GUARD_EXIT_GRACE_MS = 1000;

/**
 * The Worker implementation; one instance per spawned process. It composes the phases, each a
 * module of its own: spawn (spawn.ts), handshake (handshake.ts), the frame loop's dispatch
 * (inbound.ts), cells (cells.ts), host requests (host-requests.ts), hook calls (hooks.ts), the
 * interrupt ladder (ladder.ts) and the tree kill (killer.ts); what is left here is the lifecycle.
 */
export class WorkerProcess implements Worker {
  readonly role: WorkerRole;
  #sessionId: string;
  #generation: string;
  readonly #opts: StartWorkerOptions;
  readonly #config: WorkerConfig;
  readonly #dir: string;
  readonly #socketPath: string;
  readonly #server: Server;
  /** The skills file `materialize` wrote into the private dir (deleted after the hello). */
  readonly #materialized: string | undefined;
  readonly #token = randomBytes(32).toString("hex");
  /** Inherited by every process of this generation: found and killed even after leaving the tree. */
  readonly #tag = treeTag();
  readonly #stdout = new ByteTail();
  readonly #stderr = new ByteTail();
  readonly #known: KnownProcs = new Map();
  readonly #death = new DeathNotice();
  readonly #handshake = new Handshake(() => this.#channel?.close());
  readonly #cells = new CellSlot();
  readonly #hooks: HookCalls;
  readonly #requests: HostRequests;
  /** The frame loop's dispatch once the worker said hello: one route per message kind. */
  readonly #routes: InboundRoutes = {
    host_request: (message) => this.#requests.handle(message),
    completed: (message) => this.#onCompleted(message),
    output: (message) => this.#onOutput(message),
  };
  /** C16: the sequence rules of `output` and the running cell's listener (hooks never negotiate it). */
  readonly #live: LiveOutputs;
  #spawned: SpawnedWorker | undefined;
  #killer: TreeKiller | undefined;
  #hello: HelloMessage | undefined;
  #channel: Channel | undefined;
  #phase: "starting" | "running" | "stopping" | "dead" = "starting";
  #stop: StopInfo | undefined;
  #exit: ExitInfo | undefined;
  #seq = 0;
  #shutdownTimer: NodeJS.Timeout | undefined;
  /** The namespace init and the worker under it, when the sandbox gives the worker a pid namespace. */
  #ns: NamespaceProcs | undefined;
  /** The guard's one child: the worker command itself (or its sandbox wrapper), pinned by start time. */
  #inner: PinnedProc | undefined;

  /** The generation's group or rlimits, its CPU watch and its cells' accounting (C17). */
  readonly #limits: WorkerLimits;

  constructor(opts: StartWorkerOptions, dir: string, socketPath: string, server: Server, materialized: string | undefined, limits: WorkerLimits) {
    this.#limits = limits;
    this.#opts = opts;
    this.role = opts.role;
    this.#sessionId = opts.sessionId;
    this.#generation = opts.generation;
    this.#config = resolveConfig(opts);
    this.#live = new LiveOutputs(opts.liveOutput === true && opts.role === "workbench");
    this.#dir = dir;
    this.#socketPath = socketPath;
    this.#server = server;
    this.#materialized = materialized;
    const scope = {
      role: this.role,
      config: this.#config,
      running: () => this.#phase === "running",
      cell: () => this.#cells.run,
      channel: () => this.#channel,
      invalidate: (reason: string, detail: string) => this.#invalidate(reason, detail),
    };
    this.#hooks = new HookCalls(scope);
    this.#requests = new HostRequests(scope, opts);
  }

  get sessionId(): string {
    return this.#sessionId;
  }

  get generation(): string {
    return this.#generation;
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
    const control = this.#spawned?.control;
    if (this.#opts.spare !== true || this.#phase !== "starting" || this.#hello || !control) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `worker pid ${this.#guardPid} is not a spare waiting for its identity`);
    }
    this.#sessionId = sessionId;
    this.#generation = generation;
    control.write(`${JSON.stringify({ session_id: sessionId, generation })}\n`);
  }

  /** Spawn the worker under the guard (a spare then waits for {@link bindIdentity} before it connects). */
  async launch(): Promise<void> {
    const command = wrapCommand(
      workerCommand(this.#opts, this.#socketPath, this.#token, this.#tag, this.#materialized ?? this.#opts.skillsFile),
      this.#opts.sandbox?.prefix(this.#dir) ?? [],
    );
    this.#server.on("connection", (socket) => this.#onConnection(socket));
    // An accept failure (EMFILE...) is emitted on the server: without a listener it would throw
    // in the host. It fails the handshake; once the hello is in, the server is closed anyway.
    this.#server.on("error", (err) => {
      this.#handshake.fail(new SupervisorError("WORKER_PROTOCOL", `the worker's listening socket failed: ${err.message}`, { cause: err }));
    });
    const spawned = spawnGuarded({
      command,
      cwd: this.#opts.cwd,
      transportToken: this.#opts.transport !== undefined ? this.#token : undefined,
      spare: this.#opts.spare === true,
      dir: this.#dir,
      known: this.#known,
      tag: this.#tag,
      // The guard, bwrap and ssh run on the host: the host's own minimal environment and the tags.
      launcher: launcherEnv([this.#tag, ...tagsIn(this.#opts.env)]),
      envHandoff: this.#opts.sandbox?.envHandoff,
      stdout: this.#stdout,
      stderr: this.#stderr,
      onInner: (inner) => (this.#inner ??= inner),
      // The guard's child could not join the group or set an rlimit: the limits refuse the start.
      onGuardFailed: (error) => this.#handshake.fail(new SupervisorError(/: limits: /.test(error) ? "LIMITS_UNAVAILABLE" : "WORKER_SPAWN_FAILED", error, { tails: this.#tails() })),
      guardOptions: (guard) => this.#limits.guardArgv(guard),
      onExit: (code, signal) => {
        this.#exit = { code, signal };
        void this.#onProcessExit();
      },
    });
    if ("failed" in spawned) {
      const { message, cause } = await spawned.failed;
      this.#server.close();
      await removePrivateDir(this.#dir);
      await this.#limits.release();
      this.#phase = "dead";
      this.#death.announce({ code: null, signal: null, reason: "spawn_failed", tails: this.#tails() });
      throw new SupervisorError("WORKER_SPAWN_FAILED", message, { cause });
    }
    this.#spawned = spawned;
    this.#killer = new TreeKiller(spawned.pid, this.#known, this.#tag, () => this.#ns);
  }

  /** Wait for the hello (see {@link launch}); then the socket and the skills file are removed. */
  async handshake(): Promise<void> {
    await this.#awaitHello();
    await rm(this.#socketPath, { force: true }).catch(() => undefined);
    if (this.#materialized !== undefined) await rm(this.#materialized, { force: true }).catch(() => undefined);
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

  #onConnection(socket: Socket): void {
    if (this.#channel || this.#phase !== "starting") {
      socket.destroy();
      return;
    }
    this.#server.close();
    this.#channel = new Channel(socket, this, {
      message: (message) => this.#onMessage(message),
      fault: (reason, detail) => this.#onFault(reason, detail),
    });
  }

  #onHello(message: InboundMessage): void {
    try {
      const accepted = acceptHello(message, {
        token: this.#token,
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
    this.#limits.running(() => this.#ns?.worker.pid ?? this.#inner?.pid, this.#opts.transport !== undefined, (verdict) => {
      void this.#stopTree(verdict.reason, `${verdict.detail}; the namespace is gone`, "invalidated");
    });
    // Running from this message on: anything after it in the same chunk is an ordinary message.
    this.#phase = "running";
    this.#handshake.succeed();
  }

  // ---- the frame loop ----

  #onMessage(message: InboundMessage): void {
    if (this.#handshake.pending) {
      this.#onHello(message);
      return;
    }
    // While a graceful shutdown runs, a worker may still complete what it was doing.
    const open = this.#phase === "running" || (this.#phase === "stopping" && this.#stop?.kind === "shutdown");
    if (!open || this.#channel?.closed) return;
    dispatchInbound(message, this.#routes, (kind) => this.#invalidate("protocol_violation", `the worker sent a ${JSON.stringify(kind)} message`));
  }

  #onFault(reason: string, detail: string): void {
    if (this.#handshake.pending) {
      const err = new SupervisorError("WORKER_PROTOCOL", `handshake failed (${reason}): ${detail}`);
      // A worker that dies while connecting closes the socket first and may take a while to
      // exit: let its exit name the failure, unless it outlives the connection by the grace.
      if (reason === "worker_exited") setTimeout(() => this.#handshake.fail(err), EOF_EXIT_GRACE_MS);
      else this.#handshake.fail(err);
      return;
    }
    if (this.#stop?.kind === "shutdown" && reason === "worker_exited") return;
    this.#invalidate(reason, detail);
  }

  #onOutput(message: InboundOf<"output">): void {
    const violation = this.#live.output(message);
    if (violation) this.#invalidate("protocol_violation", `output: ${violation}`);
  }

  #onCompleted(message: InboundOf<"completed">): void {
    const run = this.#cells.run;
    if (run && run.op.id === message.id) {
      // Its output ends here (C16): a later one for this id invalidates the generation.
      this.#live.completed(message.id);
      const violation = this.#cells.complete(run, message.result, this.#stop?.kind === "shutdown");
      if (violation) this.#invalidate("protocol_violation", violation);
      return;
    }
    const call = this.#hooks.inFlight;
    if (call && call.op.id === message.id) {
      this.#hooks.complete(call, message.result);
      return;
    }
    this.#invalidate("protocol_violation", `completion for unknown operation ${JSON.stringify(message.id)}`);
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
    try {
      this.#channel!.send({ kind: "execute", id, code });
    } catch (err) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `cell ${JSON.stringify(id)} cannot be sent: ${messageOf(err)}`, { cause: err });
    }
    this.#cells.begin(cell, opts.onHostRequest);
    // Its counters start once it is sent: read while the worker runs it, off the round trip.
    this.#limits.cellBegin();
    this.#live.started(id, opts.onOutput);
    if (opts.signal) interruptOnAbort(opts.signal, cell, () => void this.interrupt(id));
    // Read as the completion settles, before the exit path removes a dead worker's group.
    return cell.promise.then((completion) => ({ ...completion, usage: this.#limits.cellEnd() }));
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
      sendInterrupt: (opId) => this.#channel?.send({ kind: "interrupt", id: opId }),
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
    rememberTree(this.#guardPid, this.#known);
    try {
      this.#channel?.send({ kind: "shutdown" });
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
    this.#channel?.close();
    this.#server.close();
    if (exitGraceMs === 0) {
      await killing;
      return;
    }
    await Promise.race([this.#spawned?.exitSeen, sleep(exitGraceMs)]);
    if (this.state === "dead") return;
    await this.#killer?.kill();
  }

  /** Runs once, on the process's `exit` event. */
  async #onProcessExit(): Promise<void> {
    clearTimeout(this.#shutdownTimer);
    // Let the connection deliver what the worker wrote before it died, so the first fault names the cause.
    for (let i = 0; i < 20 && this.#channel && !this.#channel.closed; i++) await sleep(1);
    if (!this.#stop) this.#stop = { reason: "worker_exited", detail: "the worker process exited", kind: "invalidated" };
    // A death the host did not ask for: a limit, when the mechanism recorded one, is its reason (C17).
    if (this.#stop.kind === "invalidated") {
      const verdict = this.#limits.verdict({ code: this.#exit?.code ?? null, signal: this.#exit?.signal ?? null });
      if (verdict && verdict.reason !== "file_limit" && verdict.reason !== this.#stop.reason) {
        this.#stop = { reason: verdict.reason, detail: `${verdict.detail}; the namespace is gone`, kind: "invalidated" };
      }
    }
    if (this.#phase === "running") this.#phase = "stopping";
    this.#channel?.close();
    this.#server.close();
    // One synchronous pass now; settle the pending operations as soon as the tails are in;
    // confirm all of it is gone before `exited`.
    this.#killer?.killOnce();
    await Promise.race([this.#spawned?.stdioClosed, sleep(50)]);
    const exit = this.#settleAll();
    // shutdown() may have armed its timer while the connection was drained above.
    clearTimeout(this.#shutdownTimer);
    await clearRemains({ pid: this.#guardPid, dir: this.#dir, killer: this.#killer, streams: this.#spawned?.streams ?? [] });
    await this.#limits.release();
    this.#death.announce(exit);
  }

  /** Mark the worker dead and settle every pending operation from the host's own observation. */
  #settleAll(): WorkerExit {
    const stop = this.#stop!;
    const exit: WorkerExit = { code: this.#exit?.code ?? null, signal: this.#exit?.signal ?? null, reason: stop.reason, tails: this.#tails() };
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
