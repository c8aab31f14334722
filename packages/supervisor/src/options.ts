import type { DisplayListener } from "./display.js";
import type { OutputListener } from "./live-output.js";
import type { CellCompletion, HookCompletion, InterruptOutcome, WorkerExit } from "./completion.js";
import type { CellUsage, LimitsMechanism } from "./limits/index.js";
import type { HelloMessage, HookInput, HookSlot, HostReplyBody as HostReply, HostRequest } from "./wire.js";
import type { EnvHandoff } from "./guard-launch.js";

/** A worker's role. */
export type WorkerRole = "workbench" | "hooks";

/** A worker's lifecycle state as the host sees it. */
export type WorkerState = "ready" | "busy" | "stopping" | "dead";

/** Where a host request came from. */
export interface HostRequestContext {
  executionId: string;
  requestId: string;
  /** Aborted when the execution ends: a reply after that is never sent. */
  signal: AbortSignal;
}

/** Answers one host request: the resolved value becomes `{kind:"ok"}`, a throw becomes `{kind:"error"}`. */
export type HostRequestHandler = (request: HostRequest, ctx: HostRequestContext) => Promise<unknown> | unknown;

/** Answers a host request whose execution is unknown or has ended (default: error `scope_expired`). */
export type StrayRequestHandler = (request: unknown, ctx: { executionId: string; requestId: string }) => Promise<unknown> | unknown;

/** One reply to a workbench's host request, as it went out (or did not): what a host logs. */
export interface HostReplyEvent {
  executionId: string;
  requestId: string;
  /** The request as the worker sent it (not parsed yet when the supervisor refused it first). */
  request: unknown;
  /** The body sent (an unencodable value already replaced by `internal`), or the one that could not be sent. */
  reply: HostReply;
  /** True when a handler (`onHostRequest` or `onStrayHostRequest`) produced it; false for the supervisor's own refusal (`limit_exceeded`, `scope_expired`, `invalid_request`, ...). */
  handled: boolean;
  /** False when nothing reached the worker (the execution had ended or the connection was gone). */
  sent: boolean;
}

/** Options of {@link startWorker}. */
export interface StartWorkerOptions {
  role: WorkerRole;
  sessionId: string;
  generation: string;
  /** argv of the worker; default `[resolvePython(), "-m", "klbr.worker"]`. Socket/role/ids flags are appended. */
  command?: string[];
  /** Directories prepended to PYTHONPATH. */
  pythonPath?: string[];
  cwd?: string;
  /** Extra environment over the minimal base (KLBR_WORKER_TOKEN and KLBR_TREE are always the supervisor's). */
  env?: Record<string, string>;
  /** Names of host environment variables the worker also gets (C15: the operator passes them explicitly). */
  passEnv?: readonly string[];
  /** Passed as `--skills`. */
  skillsFile?: string;
  /** Writes the skills payload into the private dir and returns its path (removed after hello). */
  materialize?: (privateDir: string) => Promise<string | undefined> | string | undefined;
  /** Passed as `--source` (hooks role). */
  sourceDir?: string;
  /**
   * C16 live output: the workbench is started with `--live-output` and each execution's output is
   * handed to its `onOutput` while it runs. Without it an `output` message invalidates the worker.
   */
  liveOutput?: boolean;
  /**
   * C20 rich display: the workbench is started with `--display` and each execution's displays are
   * handed to its `onDisplay` while it runs; its completion then carries `displays_dropped`.
   * Without it a `display` message (or a `displays_dropped`) invalidates the worker.
   */
  display?: boolean;
  /** Hello fields that must match when stated. */
  expect?: { revision?: string | null; skills?: string | null };
  handshakeTimeoutMs?: number;
  interruptGraceMs?: number;
  sigintGraceMs?: number;
  shutdownGraceMs?: number;
  /** Per-invoke budget including the wait in the queue. */
  invokeBudgetMs?: number;
  /** Invokes that may wait behind the one in flight. */
  invokeQueueLimit?: number;
  onStrayHostRequest?: StrayRequestHandler;
  /** Told every reply to a host request, refusals made by the supervisor included. */
  onHostReply?: (event: HostReplyEvent) => void;
  /** Run the worker inside a wrapper (bwrap): a command prefix, and whether it makes a pid namespace. */
  sandbox?: WorkerSandbox;
  /** The worker is reached through another command (ssh to a remote keeper): see {@link WorkerTransport}. */
  transport?: WorkerTransport;
  /**
   * Set by `startSpare` (spare.ts): the worker starts with `--identity-stdin` and waits, warm, for
   * its session and generation on stdin; `sessionId` and `generation` are placeholders until then.
   */
  spare?: boolean;
  /**
   * The host's resource limits (C17, from `prepareLimits`): the generation gets a group of its own
   * (or the guard's rlimits), a limit that ends it is its stop reason (`memory_limit`,
   * `cpu_limit`, `procs_limit`), and each cell's completion carries its `usage`.
   */
  limits?: LimitsMechanism;
}

/**
 * A worker run inside a wrapper such as bubblewrap: the same worker, a different command prefix.
 * The wrapper must keep the worker's private directory reachable at the same path inside.
 */
export interface WorkerSandbox {
  /** argv put before the worker's command; given the worker's private directory. */
  prefix(privateDir: string): string[];
  /**
   * The prefix starts the command in a new pid namespace as the child of that namespace's init,
   * which is the only child of the spawned process (bwrap --unshare-pid without --as-pid-1):
   * SIGINT then goes to the worker itself under that init, and a hard stop kills the init
   * first, which ends every process in the namespace, setsid or not, environment cleared or not.
   */
  pidNamespace?: boolean;
  /**
   * "bwrap": the prefix is bubblewrap, which then runs with the host's minimal environment and
   * hands the worker's to the worker inside (`--clearenv`, `--setenv`; see guard-launch.ts).
   */
  envHandoff?: EnvHandoff;
}

/**
 * How a worker that is not the host's own child is reached: a command (ssh) stands between the
 * two and forwards the worker's socket connection to the host's local one. The spawned process's
 * stdin is a pipe kept open, read by the far side's keeper (`python -m klbr.worker --token-stdin`):
 * its first line is the token (so the token is in no environment and no argv here), then `int`
 * is the SIGINT rung of the interrupt ladder. The hard stop kills the local command as for any
 * worker, which ends that stdin: the keeper's hard stop of the far side's tree.
 */
export interface WorkerTransport {
  /** The path the worker is given in `--socket`: the far end of the forward. */
  socketPath: string;
  /** The argv to spawn, from the worker's own argv (`command`, then the flags) and the host's local socket path. */
  wrap(workerArgv: string[], localSocket: string): string[];
}

/** Options of {@link Worker.execute}. */
export interface ExecuteOptions {
  id?: string;
  onHostRequest?: HostRequestHandler;
  /** Aborting runs the interrupt ladder for this cell. */
  signal?: AbortSignal;
  /** The cell's live output (C16, with `liveOutput`), in order, all of it before the completion resolves. */
  onOutput?: OutputListener;
  /** The cell's displays (C20, with `display`), in seq order, all of them before the completion resolves. */
  onDisplay?: DisplayListener;
}

/** A supervised worker process. */
export interface Worker {
  readonly role: WorkerRole;
  readonly pid: number;
  readonly sessionId: string;
  readonly generation: string;
  readonly hello: HelloMessage;
  readonly state: WorkerState;
  /** Last 8 KiB of the worker's raw stdout. */
  readonly stdoutTail: string;
  /** Last 8 KiB of the worker's raw stderr. */
  readonly stderrTail: string;
  /** Settles once the worker, its whole tree and every process carrying its tree tag are gone. */
  readonly exited: Promise<WorkerExit>;
  execute(code: string, opts?: ExecuteOptions): Promise<CellCompletion>;
  /** Invoke a hook slot; the input is validated against the slot's schema before it is sent. */
  invoke<S extends HookSlot>(slot: S, input: HookInput<S>, opts?: { id?: string }): Promise<HookCompletion<S>>;
  interrupt(id: string): Promise<InterruptOutcome>;
  shutdown(): Promise<WorkerExit>;
  hardStop(reason: string): Promise<WorkerExit>;
  /** The generation's CPU time and highest memory peak so far (C17; null where not measurable). */
  usage(): CellUsage;
  /** Call `listener` once when the worker is dead; returns an unsubscribe function. */
  onDeath(listener: (exit: WorkerExit) => void): () => void;
}

/** Defaults of the timing and queue options of {@link StartWorkerOptions}. */
export const DEFAULTS = {
  handshakeTimeoutMs: 10_000,
  interruptGraceMs: 1000,
  sigintGraceMs: 1000,
  shutdownGraceMs: 2000,
  invokeBudgetMs: 2000,
  invokeQueueLimit: 64,
} as const;

/** The resolved timing and queue settings of one worker. */
export type WorkerConfig = { -readonly [K in keyof typeof DEFAULTS]: number };

/** Fill unset timing and queue options with {@link DEFAULTS}. */
export function resolveConfig(opts: StartWorkerOptions): WorkerConfig {
  return {
    handshakeTimeoutMs: opts.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs,
    interruptGraceMs: opts.interruptGraceMs ?? DEFAULTS.interruptGraceMs,
    sigintGraceMs: opts.sigintGraceMs ?? DEFAULTS.sigintGraceMs,
    shutdownGraceMs: opts.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs,
    invokeBudgetMs: opts.invokeBudgetMs ?? DEFAULTS.invokeBudgetMs,
    invokeQueueLimit: opts.invokeQueueLimit ?? DEFAULTS.invokeQueueLimit,
  };
}

