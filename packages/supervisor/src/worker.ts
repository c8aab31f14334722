import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Readable } from "node:stream";
import { chmod, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { execa } from "execa";
import { Channel } from "./channel.js";
import { workerCommand } from "./command.js";
import { guardArgv, readGuardStatus } from "./guard.js";
import { namespaceProcs, signalPinned, wrapCommand, type NamespaceProcs, type PinnedProc } from "./sandbox.js";
import type {
  CellCompletion,
  EndedBy,
  ExitInfo,
  FailedCompletion,
  HookCompletion,
  HostInterruptedCompletion,
  InterruptOutcome,
  WorkerExit,
} from "./completion.js";
import { SupervisorError, type OutputTails } from "./errors.js";
import { trackWorker, untrackWorker } from "./exit-hook.js";
import { drainInto } from "./drain.js";
import { resolveConfig, type ExecuteOptions, type HostRequestContext, type HostRequestHandler, type StartWorkerOptions, type Worker, type WorkerConfig, type WorkerRole, type WorkerState } from "./options.js";
import { cellEnd, hostFailure, messageOf, replyCode, type StopInfo, type StopKind } from "./records.js";
import { checkHello } from "./hello.js";
import { IDENTIFIER, Operation } from "./operation.js";
import { makePrivateDir, removePrivateDir } from "./private-dir.js";
import { ByteTail } from "./tail.js";
import { LimitsUnavailableError, WorkerLimits, type CellUsage } from "./limits/index.js";
import { killTagged, killTaggedOnce, treeTag } from "./tagged.js";
import { killTree, killTreeOnce, readProc, recordRoot, rememberTree, type KnownProcs } from "./tree.js";
import {
  MAX_REQUESTS_PER_CELL,
  parseHookResult,
  parseHostRequest,
  type CompletedResult,
  type HelloMessage,
  type HookInput,
  type HookSlot,
  type HostReplyBody,
  type HostRequest,
  type InboundMessage,
  type OutboundMessage,
} from "./wire.js";

type AnyOperation = Operation<CellCompletion> | Operation<HookCompletion>;

/** The foreground cell and what its host requests have used so far. */
interface CellRun {
  op: Operation<CellCompletion>;
  handler: HostRequestHandler | undefined;
  /** Host requests seen, refused ones included (the 129th is refused). */
  requests: number;
  /** Set once the host accepted a runtime.wait: later requests are refused, `yielded` is allowed. */
  waitAccepted: boolean;
}

interface HookCall {
  op: Operation<HookCompletion>;
  slot: HookSlot;
  input: unknown;
  /** performance.now() by which the call must complete: monotonic, unlike the Date.now() records. */
  deadline: number;
  timer?: NodeJS.Timeout;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a worker that closed its connection before hello has to exit (then WORKER_EXITED_EARLY). */
const EOF_EXIT_GRACE_MS = 2000;

/**
 * How long a worker that closed its connection has to exit before its tree is killed: its guard
 * clears what the worker left and then exits with the worker's own status, which a kill would hide.
 */
const GUARD_EXIT_GRACE_MS = 1000;

/** Call `fn` synchronously; its value, promise or throw becomes one promise. */
const settleWith = <T>(fn: () => T | Promise<T>): Promise<T> => new Promise<T>((resolve) => resolve(fn()));

/**
 * Start a worker: private 0700 dir and socket, spawn in its own process group, accept one
 * connection, check its hello. Resolves once the worker is ready; on any failure the tree is
 * stopped, the directory removed, and a SupervisorError thrown.
 */
export async function startWorker(opts: StartWorkerOptions): Promise<Worker> {
  if (opts.role !== "workbench" && opts.role !== "hooks") {
    throw new SupervisorError("WORKER_INVALID_ARGUMENT", `role must be workbench or hooks, got ${JSON.stringify(opts.role)}`);
  }
  for (const [name, value] of [["sessionId", opts.sessionId], ["generation", opts.generation]] as const) {
    if (typeof value !== "string" || !IDENTIFIER.test(value)) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `${name} ${JSON.stringify(value)} is not an identifier`);
    }
  }
  if (opts.command !== undefined && (opts.command.length === 0 || !opts.command[0])) {
    throw new SupervisorError("WORKER_INVALID_ARGUMENT", `command must name a program, got ${JSON.stringify(opts.command)}`);
  }
  const { dir, socketPath } = await makePrivateDir();
  let materialized: string | undefined;
  let server: Server | undefined;
  try {
    if (opts.materialize) materialized = (await opts.materialize(dir)) ?? undefined;
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(socketPath, () => {
        server!.off("error", reject);
        resolve();
      });
    });
    // Created with the umask (often 0755): only the worker may connect, so 0600 before it is spawned.
    await chmod(socketPath, 0o600);
  } catch (err) {
    server?.close();
    await removePrivateDir(dir);
    throw err;
  }
  let limits: WorkerLimits;
  try {
    limits = new WorkerLimits(opts.limits, `${opts.role}-${opts.sessionId}-${opts.generation}`);
  } catch (err) {
    server.close();
    await removePrivateDir(dir);
    if (err instanceof LimitsUnavailableError) throw new SupervisorError("LIMITS_UNAVAILABLE", err.message, { cause: err });
    throw err;
  }
  const worker = new WorkerProcess(opts, dir, socketPath, server, materialized, limits);
  await worker.start();
  return worker;
}

/** The Worker implementation; one instance per spawned process. */
class WorkerProcess implements Worker {
  readonly role: WorkerRole;
  readonly sessionId: string;
  readonly generation: string;
  readonly exited: Promise<WorkerExit>;
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
  readonly #deathListeners = new Set<(exit: WorkerExit) => void>();
  #resolveExited!: (exit: WorkerExit) => void;
  #pid = 0;
  #hello: HelloMessage | undefined;
  #channel: Channel | undefined;
  #phase: "starting" | "running" | "stopping" | "dead" = "starting";
  #stop: StopInfo | undefined;
  #exit: ExitInfo | undefined;
  #stdioClosed!: Promise<void>;
  #exitSeen!: Promise<void>;
  #handshake: { resolve(): void; reject(err: SupervisorError): void } | undefined;
  #seq = 0;
  /** The running cell; cleared before its operation settles, so it is never an ended one. */
  #cell: CellRun | undefined;
  #hookInFlight: HookCall | undefined;
  readonly #hookQueue: HookCall[] = [];
  #shutdownTimer: NodeJS.Timeout | undefined;
  #treeKill: Promise<unknown> | undefined;
  /** The namespace init and the worker under it, when the sandbox gives the worker a pid namespace. */
  #ns: NamespaceProcs | undefined;
  /** The transport's control pipe (the spawned command's stdin), when there is a transport. */
  #control: NodeJS.WritableStream | undefined;
  /** The guard's one child: the worker command itself (or its sandbox wrapper), pinned by start time. */
  #inner: PinnedProc | undefined;
  #streams: Array<{ destroy(): unknown } | null | undefined> = [];
  /** The generation's group or rlimits, its CPU watch and its cells' accounting (C17). */
  readonly #limits: WorkerLimits;

  constructor(
    opts: StartWorkerOptions,
    dir: string,
    socketPath: string,
    server: Server,
    materialized: string | undefined,
    limits: WorkerLimits,
  ) {
    this.#limits = limits;
    this.#opts = opts;
    this.role = opts.role;
    this.sessionId = opts.sessionId;
    this.generation = opts.generation;
    this.#config = resolveConfig(opts);
    this.#dir = dir;
    this.#socketPath = socketPath;
    this.#server = server;
    this.#materialized = materialized;
    this.exited = new Promise<WorkerExit>((resolve) => {
      this.#resolveExited = resolve;
    });
  }

  /** The worker command's pid (the guard's child); the guard's own until the guard reported it. */
  get pid(): number {
    return this.#inner?.pid ?? this.#pid;
  }

  get hello(): HelloMessage {
    if (!this.#hello) throw new SupervisorError("WORKER_PROTOCOL", "the worker has not said hello yet");
    return this.#hello;
  }

  get state(): WorkerState {
    if (this.#phase === "dead") return "dead";
    if (this.#phase === "stopping" || this.#phase === "starting") return "stopping";
    return this.#cell || this.#hookInFlight ? "busy" : "ready";
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
    const inner = wrapCommand(
      workerCommand(this.#opts, this.#socketPath, this.#token, this.#tag, this.#materialized ?? this.#opts.skillsFile),
      this.#opts.sandbox?.prefix(this.#dir) ?? [],
    );
    // Under the guard: it dies with the host (even kill -9), and as a subreaper it keeps and kills
    // whatever the worker's tree leaves behind when the worker dies, setsid'd or env-cleared.
    const [file, ...args] = this.#limits.guardArgv(guardArgv([inner.file, ...inner.args]));
    const env = inner.env;

    const ready = new Promise<void>((resolve, reject) => {
      this.#handshake = { resolve, reject };
    });
    this.#server.on("connection", (socket) => this.#onConnection(socket));
    // An accept failure (EMFILE...) is emitted on the server: without a listener it would throw
    // in the host. It fails the handshake; once the hello is in, the server is closed anyway.
    this.#server.on("error", (err) => {
      this.#failHandshake(new SupervisorError("WORKER_PROTOCOL", `the worker's listening socket failed: ${err.message}`, { cause: err }));
    });

    const transport = this.#opts.transport !== undefined;
    const subprocess = execa(file, args, {
      detached: true,
      cleanup: false,
      // fd 3: the guard's status line.
      stdio: [transport ? "pipe" : "ignore", "pipe", "pipe", "pipe"],
      buffer: false,
      reject: false,
      encoding: "buffer",
      extendEnv: false,
      env,
      ...(this.#opts.cwd !== undefined ? { cwd: this.#opts.cwd } : {}),
    });
    if (subprocess.pid === undefined) {
      const result = await subprocess;
      this.#server.close();
      await removePrivateDir(this.#dir);
      this.#phase = "dead";
      const exit: WorkerExit = { code: null, signal: null, reason: "spawn_failed", tails: this.#tails() };
      this.#resolveExited(exit);
      throw new SupervisorError("WORKER_SPAWN_FAILED", `could not spawn ${JSON.stringify(file)}: ${result.message ?? "unknown error"}`, {
        cause: result.cause,
      });
    }
    this.#pid = subprocess.pid;
    if (transport && subprocess.stdin) {
      // The command may die before reading it (EPIPE): its exit tells the story, not this stream.
      subprocess.stdin.on("error", () => undefined);
      subprocess.stdin.write(`${this.#token}\n`);
      this.#control = subprocess.stdin;
    }
    // Not reaped before this synchronous code ends, so the pid is still ours: record its start
    // time, and no tree kill after the reap can hit a process that reused the pid.
    recordRoot(this.#pid, this.#known);
    trackWorker(this.#pid, this.#dir, this.#known, this.#tag);
    void readGuardStatus(subprocess.stdio[3] as Readable).then((status) => {
      if ("pid" in status) this.#inner ??= pin(status.pid);
      // Unreported (the guard could not even run): the exit tells the story, as for any early exit.
      else if (status.reported) {
        // The guard's child could not join the group or set an rlimit: the limits refuse the start.
        const code = status.error.startsWith("limits:") ? "LIMITS_UNAVAILABLE" : "WORKER_SPAWN_FAILED";
        this.#failHandshake(new SupervisorError(code, `could not run ${JSON.stringify(inner.file)}: ${status.error}`, { tails: this.#tails() }));
      }
    });
    this.#streams = [subprocess.stdout, subprocess.stderr];
    drainInto(subprocess.stdout, this.#stdout);
    drainInto(subprocess.stderr, this.#stderr);
    this.#stdioClosed = Promise.all(
      [subprocess.stdout, subprocess.stderr].map(
        (stream) => new Promise<void>((resolve) => (stream && !stream.destroyed ? stream.once("close", () => resolve()) : resolve())),
      ),
    ).then(() => undefined);
    this.#exitSeen = new Promise<void>((resolve) => subprocess.once("exit", () => resolve()));
    subprocess.once("exit", (code, signal) => {
      this.#exit = { code, signal };
      void this.#onProcessExit();
    });
    void subprocess.catch(() => undefined);

    const timer = setTimeout(() => {
      this.#failHandshake(
        new SupervisorError("WORKER_HANDSHAKE_TIMEOUT", `no valid hello within ${this.#config.handshakeTimeoutMs} ms from pid ${this.#pid}`, {
          tails: this.#tails(),
        }),
      );
    }, this.#config.handshakeTimeoutMs);
    try {
      await ready;
    } catch (err) {
      await this.#stopTree(err instanceof SupervisorError ? `handshake:${err.code}` : "handshake", messageOf(err), "invalidated");
      await this.exited;
      if (err instanceof SupervisorError && err.tails === undefined) {
        throw new SupervisorError(err.code, err.message, { cause: err.cause, tails: this.#tails() });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
    await rm(this.#socketPath, { force: true }).catch(() => undefined);
    if (this.#materialized !== undefined) await rm(this.#materialized, { force: true }).catch(() => undefined);
  }

  #failHandshake(err: SupervisorError): void {
    const hs = this.#handshake;
    if (!hs) return;
    this.#handshake = undefined;
    this.#channel?.close();
    hs.reject(err);
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
    if (message.kind !== "hello") {
      this.#failHandshake(new SupervisorError("WORKER_PROTOCOL", `the first message must be hello, got ${JSON.stringify(message.kind)}`));
      return;
    }
    const hello = message as HelloMessage;
    try {
      checkHello(hello, {
        token: this.#token,
        role: this.role,
        revision: this.#opts.expect?.revision,
        skills: this.#opts.expect?.skills,
      });
    } catch (err) {
      this.#failHandshake(err as SupervisorError);
      return;
    }
    // The guard reports its child before the worker can connect; /proc says the same otherwise.
    this.#inner ??= onlyChild(this.#pid);
    if (this.#opts.sandbox?.pidNamespace) {
      // Before any cell runs, the init has one child, the worker: pinned now, the SIGINT rung and
      // the hard stop never have to guess which process inside is which.
      this.#ns = this.#inner ? namespaceProcs(this.#inner.pid) : undefined;
      if (!this.#ns) {
        this.#failHandshake(new SupervisorError("WORKER_PROTOCOL", `pid ${this.#pid} does not run the worker under a pid namespace init as its sandbox promised`));
        return;
      }
    }
    this.#hello = hello;
    // Measured and watched from here: the worker process is known (under a sandbox, the one inside).
    this.#limits.running(() => this.#ns?.worker.pid ?? this.#inner?.pid, this.#opts.transport !== undefined, (verdict) => {
      void this.#stopTree(verdict.reason, `${verdict.detail}; the namespace is gone`, "invalidated");
    });
    // Running from this message on: anything after it in the same chunk is an ordinary message.
    this.#phase = "running";
    const hs = this.#handshake;
    this.#handshake = undefined;
    hs?.resolve();
  }

  // ---- inbound ----

  #onMessage(message: InboundMessage): void {
    if (this.#handshake) {
      this.#onHello(message);
      return;
    }
    // While a graceful shutdown runs, a worker may still complete what it was doing.
    const open = this.#phase === "running" || (this.#phase === "stopping" && this.#stop?.kind === "shutdown");
    if (!open || this.#channel?.closed) return;
    switch (message.kind) {
      case "host_request":
        this.#onHostRequest(message as Extract<InboundMessage, { kind: "host_request" }>);
        return;
      case "completed":
        this.#onCompleted(message as Extract<InboundMessage, { kind: "completed" }>);
        return;
      default:
        this.#invalidate("protocol_violation", `the worker sent a ${JSON.stringify(message.kind)} message`);
    }
  }

  #onFault(reason: string, detail: string): void {
    if (this.#handshake) {
      const err = new SupervisorError("WORKER_PROTOCOL", `handshake failed (${reason}): ${detail}`);
      // A worker that dies while connecting closes the socket first and may take a while to
      // exit: let its exit name the failure, unless it outlives the connection by the grace.
      if (reason === "worker_exited") setTimeout(() => this.#failHandshake(err), EOF_EXIT_GRACE_MS);
      else this.#failHandshake(err);
      return;
    }
    if (this.#stop?.kind === "shutdown" && reason === "worker_exited") return;
    this.#invalidate(reason, detail);
  }

  #onHostRequest(message: { id: string; execution_id: string; request: unknown }): void {
    if (this.role !== "workbench") {
      this.#invalidate("protocol_violation", `a hooks worker sent host_request ${JSON.stringify(message.id)}`);
      return;
    }
    // While a shutdown runs no reply can be sent, so no handler runs either: an effect whose
    // receipt could never reach the cell is not made.
    if (this.#phase !== "running") return;
    const run = this.#cell;
    const ids = { executionId: message.execution_id, requestId: message.id };
    if (!run || run.op.id !== message.execution_id) {
      const stray = this.#opts.onStrayHostRequest;
      if (!stray) {
        this.#reply(undefined, message, {
          kind: "error",
          code: "scope_expired",
          message: `execution ${JSON.stringify(message.execution_id)} is not running`,
        });
        return;
      }
      void settleWith(() => stray(message.request, ids)).then(
        (value) => this.#reply(undefined, message, { kind: "ok", value }, true),
        (err) => this.#reply(undefined, message, { kind: "error", code: replyCode(err), message: messageOf(err) }, true),
      );
      return;
    }
    const cell = run.op;
    run.requests += 1;
    if (run.requests > MAX_REQUESTS_PER_CELL) {
      this.#reply(cell, message, {
        kind: "error",
        code: "limit_exceeded",
        message: `request ${run.requests} of execution ${JSON.stringify(cell.id)} exceeds the limit of ${MAX_REQUESTS_PER_CELL}`,
      });
      return;
    }
    if (run.waitAccepted) {
      this.#reply(cell, message, {
        kind: "error",
        code: "scope_expired",
        message: `execution ${JSON.stringify(cell.id)} has yielded; request ${JSON.stringify(message.id)} is refused`,
      });
      return;
    }
    let request: HostRequest;
    try {
      request = parseHostRequest(message.request);
    } catch (err) {
      this.#reply(cell, message, { kind: "error", code: "invalid_request", message: messageOf(err) });
      return;
    }
    const handler = run.handler;
    if (!handler) {
      this.#reply(cell, message, { kind: "error", code: "unsupported", message: `no host request handler for ${JSON.stringify(request.method)}` });
      return;
    }
    const ctx: HostRequestContext = { ...ids, signal: cell.signal };
    // Called now, while the cell certainly runs: a completion read later in the same chunk cannot
    // end the cell before its handler starts (it aborts ctx.signal afterwards instead).
    void settleWith(() => handler(request, ctx)).then(
      (value) => {
        if (request.method === "runtime.wait") run.waitAccepted = true;
        this.#reply(cell, message, { kind: "ok", value }, true);
      },
      (err) => this.#reply(cell, message, { kind: "error", code: replyCode(err), message: messageOf(err) }, true),
    );
  }

  /**
   * Send a host_reply unless its execution has ended; an unencodable value becomes an `internal`
   * error. `onHostReply` is told the body that went out (or that nothing did), so the host logs
   * exactly what the worker got, refusals made here included. `handled`: a handler produced it.
   */
  #reply(cell: Operation<CellCompletion> | undefined, request: { id: string; execution_id: string; request?: unknown }, reply: HostReplyBody, handled = false): void {
    const sent = this.#sendReply(cell, request, reply);
    const report = this.#opts.onHostReply;
    if (!report) return;
    try {
      report({ executionId: request.execution_id, requestId: request.id, request: request.request, reply: sent ?? reply, handled, sent: sent !== null });
    } catch {
      /* the host's log failing must not break the exchange */
    }
  }

  #sendReply(cell: Operation<CellCompletion> | undefined, request: { id: string; execution_id: string }, reply: HostReplyBody): HostReplyBody | null {
    if (cell?.ended) return null;
    const channel = this.#channel;
    if (!channel || channel.closed || this.#phase !== "running") return null;
    const base = { kind: "host_reply" as const, id: request.id, execution_id: request.execution_id };
    try {
      channel.send({ ...base, reply });
      return reply;
    } catch (err) {
      const fallback: HostReplyBody = { kind: "error", code: "internal", message: `the reply could not be encoded: ${messageOf(err)}` };
      channel.send({ ...base, reply: fallback });
      return fallback;
    }
  }

  #onCompleted(message: { id: string; result: CompletedResult }): void {
    const run = this.#cell;
    if (run && run.op.id === message.id) {
      this.#completeCell(run, message.result);
      return;
    }
    const call = this.#hookInFlight;
    if (call && call.op.id === message.id) {
      this.#completeHook(call, message.result);
      return;
    }
    this.#invalidate("protocol_violation", `completion for unknown operation ${JSON.stringify(message.id)}`);
  }

  #completeCell(run: CellRun, result: CompletedResult): void {
    const cell = run.op;
    const endedBy: EndedBy = cell.rung ?? (this.#stop?.kind === "shutdown" ? "shutdown" : "worker");
    const base = { id: cell.id, startedAt: cell.startedAt, endedAt: Date.now(), endedBy };
    if (result.kind === "cell") {
      if (result.status === "yielded" && !run.waitAccepted) {
        this.#invalidate("protocol_violation", `execution ${JSON.stringify(cell.id)} yielded without an accepted wait`);
        return;
      }
      this.#cell = undefined;
      cell.settle({ ...result, ...base, source: "worker" });
    } else if (result.kind === "failed") {
      this.#cell = undefined;
      cell.settle({ ...base, kind: "failed", source: "worker", error: result.error, reason: "worker_failed", exit: null, tails: null });
    } else {
      this.#invalidate("protocol_violation", `a ${result.kind} result completed cell ${JSON.stringify(cell.id)}`);
    }
  }

  #completeHook(call: HookCall, result: CompletedResult): void {
    clearTimeout(call.timer);
    const op = call.op;
    const base = { id: op.id, startedAt: op.startedAt, endedAt: Date.now(), endedBy: (op.rung ?? "worker") as EndedBy };
    if (result.kind === "cell") {
      this.#invalidate("protocol_violation", `a cell result completed hook call ${JSON.stringify(op.id)}`);
      return;
    }
    this.#hookInFlight = undefined;
    if (result.kind === "failed") {
      op.settle({ ...base, kind: "failed", source: "worker", error: result.error, reason: "worker_failed", exit: null, tails: null });
    } else {
      try {
        const value = parseHookResult(call.slot, result.value);
        op.settle({ ...base, kind: "hook", source: "worker", value });
      } catch (err) {
        op.settle({
          ...base,
          kind: "failed",
          source: "worker",
          error: `invalid ${call.slot} result: ${messageOf(err)}`,
          reason: "invalid_result",
          exit: null,
          tails: null,
        });
      }
    }
    this.#pumpHooks();
  }

  // ---- operations ----

  async execute(code: string, opts: ExecuteOptions = {}): Promise<CellCompletion> {
    if (this.role !== "workbench") throw new SupervisorError("WORKER_WRONG_ROLE", `execute needs a workbench worker, pid ${this.#pid} is ${this.role}`);
    if (this.#phase !== "running") throw new SupervisorError("WORKER_DEAD", `worker pid ${this.#pid} is ${this.state}`, { tails: this.#tails() });
    if (this.#cell) throw new SupervisorError("WORKER_BUSY", `worker pid ${this.#pid} is running cell ${JSON.stringify(this.#cell.op.id)}`);
    const id = opts.id ?? `c-${++this.#seq}`;
    if (!IDENTIFIER.test(id)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `execution id ${JSON.stringify(id)} is not an identifier`);
    const cell = new Operation<CellCompletion>(id);
    try {
      this.#channel!.send({ kind: "execute", id, code });
    } catch (err) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `cell ${JSON.stringify(id)} cannot be sent: ${messageOf(err)}`, { cause: err });
    }
    this.#limits.cellBegin();
    this.#cell = { op: cell, handler: opts.onHostRequest, requests: 0, waitAccepted: false };
    const signal = opts.signal;
    if (signal) {
      const onAbort = () => void this.interrupt(id);
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener("abort", onAbort, { once: true });
        void cell.promise.then(() => signal.removeEventListener("abort", onAbort));
      }
    }
    // Read as the completion settles, before the exit path removes a dead worker's group.
    return cell.promise.then((completion) => ({ ...completion, usage: this.#limits.cellEnd() }));
  }

  async invoke<S extends HookSlot>(slot: S, input: HookInput<S>, opts: { id?: string } = {}): Promise<HookCompletion<S>> {
    if (this.role !== "hooks") throw new SupervisorError("WORKER_WRONG_ROLE", `invoke needs a hooks worker, pid ${this.#pid} is ${this.role}`);
    const id = opts.id ?? `h-${++this.#seq}`;
    if (!IDENTIFIER.test(id)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `invoke id ${JSON.stringify(id)} is not an identifier`);
    if (this.#hookInFlight?.op.id === id || this.#hookQueue.some((c) => c.op.id === id)) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `invoke id ${JSON.stringify(id)} is already pending`);
    }
    const op = new Operation<HookCompletion>(id);
    if (this.#phase !== "running") {
      op.settle(hostFailure(op, "worker_dead", `worker pid ${this.#pid} is ${this.state}`));
      return op.promise;
    }
    if (this.#hookQueue.length >= this.#config.invokeQueueLimit) {
      op.settle(hostFailure(op, "queue_full", `${this.#hookQueue.length} invokes are already waiting`));
      return op.promise;
    }
    this.#hookQueue.push({ op, slot, input, deadline: performance.now() + this.#config.invokeBudgetMs });
    this.#pumpHooks();
    return op.promise;
  }

  #pumpHooks(): void {
    while (!this.#hookInFlight && this.#hookQueue.length > 0 && this.#phase === "running") {
      const call = this.#hookQueue.shift()!;
      const remaining = call.deadline - performance.now();
      if (remaining <= 0) {
        call.op.settle(hostFailure(call.op, "hook_timeout", `the ${this.#config.invokeBudgetMs} ms budget ran out in the queue`));
        continue;
      }
      try {
        this.#channel!.send({ kind: "invoke", id: call.op.id, slot: call.slot, input: call.input } as OutboundMessage);
      } catch (err) {
        call.op.settle(hostFailure(call.op, "invalid_input", `invoke ${JSON.stringify(call.op.id)} cannot be sent: ${messageOf(err)}`));
        continue;
      }
      this.#hookInFlight = call;
      call.timer = setTimeout(() => {
        if (this.#hookInFlight === call) {
          this.#invalidate("hook_timeout", `invoke ${JSON.stringify(call.op.id)} overran its ${this.#config.invokeBudgetMs} ms budget`);
        }
      }, remaining);
    }
  }

  async interrupt(id: string): Promise<InterruptOutcome> {
    const op: AnyOperation | undefined =
      this.#cell?.op.id === id ? this.#cell.op : this.#hookInFlight?.op.id === id ? this.#hookInFlight.op : undefined;
    if (!op || op.ended || this.#phase !== "running") return { rung: "not_running" };
    op.ladder ??= this.#ladder(op);
    return op.ladder;
  }

  async #ladder(op: AnyOperation): Promise<InterruptOutcome> {
    const outcome = (): InterruptOutcome => {
      const completion = op.result;
      // A hard stop from elsewhere (hardStop, shutdown) may end the cell while an earlier rung waits.
      const rung = completion?.endedBy === "hard_stop" ? "hard_stop" : (op.rung ?? "message");
      return completion ? { rung, completion } : { rung };
    };
    op.rung = "message";
    this.#channel?.send({ kind: "interrupt", id: op.id });
    if (await op.endsWithin(this.#config.interruptGraceMs)) return outcome();
    op.rung = "sigint";
    // Once the exit is observed the pid is reaped (and may be reused): the exit path settles the operation.
    if (this.#control) this.#control.write("int\n");
    else if (this.#exit === undefined) {
      // In a pid namespace the spawned process is the sandbox's, not the worker: the worker gets it.
      if (this.#ns) signalPinned(this.#ns.worker, "SIGINT");
      else if (this.#inner) signalPinned(this.#inner, "SIGINT");
      else {
        try {
          process.kill(this.#pid, "SIGINT");
        } catch {
          // already gone
        }
      }
    }
    if (await op.endsWithin(this.#config.sigintGraceMs)) return outcome();
    op.rung = "hard_stop";
    await this.#stopTree("interrupt_escalated", `operation ${JSON.stringify(op.id)} ignored interrupt and SIGINT`, "requested");
    await op.promise;
    return outcome();
  }

  async shutdown(): Promise<WorkerExit> {
    if (this.#phase !== "running") return this.exited;
    this.#phase = "stopping";
    this.#stop = { reason: "shutdown", detail: "the host asked the worker to exit", kind: "shutdown" };
    rememberTree(this.#pid, this.#known);
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
      void this.#killTree();
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
    if (this.#phase === "dead") {
      void this.exited.then(listener);
      return () => undefined;
    }
    this.#deathListeners.add(listener);
    return () => this.#deathListeners.delete(listener);
  }

  // ---- stopping ----

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
    const killing = exitGraceMs > 0 ? undefined : this.#killTree();
    this.#channel?.close();
    this.#server.close();
    if (killing) {
      await killing;
      return;
    }
    await Promise.race([this.#exitSeen, sleep(exitGraceMs)]);
    if (this.state === "dead") return;
    await this.#killTree();
  }

  #killTree(): Promise<unknown> {
    // Killing the namespace's init makes the kernel kill every process inside at once; the tree
    // kill then takes the sandbox process outside it.
    if (this.#ns) signalPinned(this.#ns.init, "SIGKILL");
    this.#treeKill ??= killTree(this.#pid, this.#known);
    return this.#treeKill;
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
    // One synchronous pass now (the group, what was seen of the tree, then every process carrying
    // the generation's tag: an orphan the worker's death handed to init is out of the tree); settle
    // the pending operations as soon as the tails are in; confirm all of it is gone before `exited`.
    if (this.#ns) signalPinned(this.#ns.init, "SIGKILL");
    killTreeOnce(this.#pid, this.#known);
    killTaggedOnce([this.#tag]);
    await Promise.race([this.#stdioClosed, sleep(50)]);
    const exit = this.#settleAll();
    // shutdown() may have armed its timer while the connection was drained above.
    clearTimeout(this.#shutdownTimer);
    this.#treeKill = undefined;
    await this.#killTree();
    await killTagged(this.#tag);
    await this.#limits.release();
    await removePrivateDir(this.#dir);
    // A process that escaped every kill (another uid's, say) may still hold the pipes: they must
    // not keep the host alive.
    for (const stream of this.#streams) stream?.destroy();
    untrackWorker(this.#pid);
    this.#resolveExited(exit);
    for (const listener of this.#deathListeners) listener(exit);
    this.#deathListeners.clear();
  }

  /** Mark the worker dead and settle every pending operation from the host's own observation. */
  #settleAll(): WorkerExit {
    const stop = this.#stop!;
    const exit: WorkerExit = {
      code: this.#exit?.code ?? null,
      signal: this.#exit?.signal ?? null,
      reason: stop.reason,
      tails: this.#tails(),
    };
    this.#phase = "dead";
    this.#failHandshake(
      new SupervisorError("WORKER_EXITED_EARLY", `worker pid ${this.#pid} exited (code ${exit.code}, signal ${exit.signal}) before a valid hello`, {
        tails: exit.tails,
      }),
    );
    const cell = this.#cell?.op;
    this.#cell = undefined;
    if (cell) {
      const end = cellEnd(cell, stop, exit);
      // The worker's own kick at the message rung is a SIGINT too: the ladder reports what ended it.
      if (end.endedBy === "sigint") cell.rung = "sigint";
      cell.settle(end);
    }
    const calls = [...(this.#hookInFlight ? [this.#hookInFlight] : []), ...this.#hookQueue.splice(0)];
    this.#hookInFlight = undefined;
    for (const call of calls) {
      clearTimeout(call.timer);
      call.op.settle(hostFailure(call.op, stop.reason, stop.detail, exit));
    }
    return exit;
  }
}

/** Pin `pid` with its start time (undefined when it is already gone). */
function pin(pid: number): PinnedProc | undefined {
  const entry = readProc(pid);
  return entry ? { pid, start: entry.start } : undefined;
}

/** The one child of `root`, pinned; undefined unless there is exactly one. */
function onlyChild(root: number): PinnedProc | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${root}/task/${root}/children`, "utf8").trim();
  } catch {
    return undefined;
  }
  const pids = text.split(/\s+/).filter(Boolean);
  return pids.length === 1 ? pin(Number(pids[0])) : undefined;
}
