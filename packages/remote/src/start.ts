import { randomBytes } from "node:crypto";
import { isSupervisorError, rlimitsFor, startWorker, type ResourceLimits, type StartWorkerOptions, type Worker } from "@klbr/supervisor";
import type { RuntimeBundle } from "./bundle.js";
import { isRemoteError, RemoteError } from "./errors.js";
import { ensureRuntime, type InstalledRuntime } from "./install.js";
import { shellJoin, shellQuote, sshArgv } from "./ssh-argv.js";
import { sshFailure } from "./ssh-run.js";
import type { Target } from "./targets.js";

/** The first line a keeper writes (python/klbr/worker/keeper.py). */
export const KEEPER_PID_PREFIX = "klbr.keeper pid=";

/** Options of {@link startRemoteWorker}: the supervisor's timing options pass through. */
export interface RemoteWorkerOptions
  extends Pick<StartWorkerOptions, "interruptGraceMs" | "sigintGraceMs" | "shutdownGraceMs" | "handshakeTimeoutMs" | "onStrayHostRequest" | "liveOutput" | "display"> {
  target: Target;
  /** The runtime the worker runs from: `<workdir>/klbr-<digest>`. */
  runtime: Pick<InstalledRuntime, "digest" | "dir">;
  sessionId: string;
  generation: string;
  /** The ssh program (default `ssh`). */
  ssh?: string;
  /** The host's limits (C17): the keeper sets them on the worker as rlimits (no cgroup of the target's is made). */
  limits?: ResourceLimits;
}

/** The keeper's `--limits` argument for the host's limits (tmp is the local sandbox's: not there). */
export function keeperLimitsArgs(limits: ResourceLimits | undefined): string[] {
  // No limits (or tmp alone) give no rlimits, so no argument.
  const rlimits = rlimitsFor({ ...limits, tmpBytes: undefined });
  return Object.keys(rlimits).length > 0 ? ["--limits", JSON.stringify({ rlimits })] : [];
}

/** A workbench worker running on a target, supervised here like a local one. */
export interface RemoteWorker {
  worker: Worker;
  /** The worker's pid on the target (the keeper's child). */
  remotePid: number;
  /** The worker's socket path on the target (the forward's far end). */
  remoteSocket: string;
  /** The remote interpreter's version, as the keeper reported it. */
  python: string;
}

/** What the remote command writes on stderr, and exits 97 with, when the runtime is not installed there. */
export const RUNTIME_ABSENT = "klbr.remote: runtime absent";

/**
 * The remote command line: refuse (exit 97, {@link RUNTIME_ABSENT}) unless the runtime's digest
 * file is there (removing `socketPath`, the forward's socket, then), so a warm start needs no
 * separate check; then the work directory, the runtime on
 * PYTHONPATH (from `$PWD`, so a workdir relative to the remote home works too; the digest is hex),
 * and the worker's argv.
 */
export function remoteWorkerCommand(target: Target, runtime: Pick<InstalledRuntime, "digest">, workerArgv: string[], socketPath?: string): string {
  if (!/^[0-9a-f]{64}$/.test(runtime.digest)) throw new RangeError(`runtime digest ${JSON.stringify(runtime.digest)} is not 64 hex digits`);
  const marker = shellQuote(`${target.workdir}/klbr-${runtime.digest}/.klbr-digest`);
  // sshd made the forward's socket before the command ran, and no keeper will remove it now.
  const unlink = socketPath === undefined ? "" : `rm -f ${shellQuote(socketPath)}; `;
  return (
    `test -f ${marker} || { ${unlink}echo ${shellQuote(RUNTIME_ABSENT)} >&2; exit 97; }; ` +
    `cd ${shellQuote(target.workdir)} && exec env "PYTHONPATH=$PWD/klbr-${runtime.digest}" ${shellJoin(workerArgv)}`
  );
}

/**
 * Where the target's sshd listens for the worker: `<workdir>/klbr-r-<random>.sock` when the
 * workdir is absolute and the path fits a Unix socket address (107 bytes) without a `:` (ssh's
 * `-R remote:local` would split there), else `/tmp/klbr-r-<random>.sock`. sshd creates it 0600
 * (StreamLocalBindMask), the name is 96 random bits, and the keeper removes it when it exits.
 */
export function remoteSocketPath(workdir: string, random: string = randomBytes(12).toString("hex")): string {
  const inWorkdir = `${workdir}/klbr-r-${random}.sock`;
  return workdir.startsWith("/") && !inWorkdir.includes(":") && Buffer.byteLength(inWorkdir) <= 107 ? inWorkdir : `/tmp/klbr-r-${random}.sock`;
}

/** The keeper's first line in a stdout tail (`klbr.keeper pid=N python=V`), or null. */
export function keeperPid(stdout: string): { pid: number; python: string } | null {
  const match = /(?:^|\n)klbr\.keeper pid=(\d+) python=(\S+)\n/.exec(stdout);
  return match ? { pid: Number(match[1]), python: match[2]! } : null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Start `python -m klbr.worker --token-stdin --role workbench` on the target, in its work
 * directory, under ssh with one forward: the worker's socket on the target (`-R`) to the
 * supervisor's private local socket. The supervisor writes the token on ssh's stdin (the keeper
 * reads it there) and then does what it does for any worker: hello checks, limits, invalidation,
 * the interrupt ladder (the SIGINT rung is the keeper's `int` line) and the hard stop (killing
 * ssh ends the keeper's stdin: it kills the remote tree).
 */
export async function startRemoteWorker(opts: RemoteWorkerOptions): Promise<RemoteWorker> {
  const { target, runtime } = opts;
  const remoteSocket = remoteSocketPath(target.workdir);
  let worker: Worker;
  try {
    worker = await startWorker({
      role: "workbench",
      sessionId: opts.sessionId,
      generation: opts.generation,
      command: [target.python, "-m", "klbr.worker", "--token-stdin", ...keeperLimitsArgs(opts.limits)],
      handshakeTimeoutMs: opts.handshakeTimeoutMs ?? 30_000,
      shutdownGraceMs: opts.shutdownGraceMs ?? 10_000,
      // Unset (undefined), these are the supervisor's defaults, as an absent option is.
      interruptGraceMs: opts.interruptGraceMs,
      sigintGraceMs: opts.sigintGraceMs,
      onStrayHostRequest: opts.onStrayHostRequest,
      // C16 through the same path as a local worker: --live-output rides the remote argv.
      liveOutput: opts.liveOutput,
      // C20 the same way: --display rides the remote argv.
      display: opts.display,
      transport: {
        socketPath: remoteSocket,
        wrap: (argv, localSocket) => sshArgv(target, remoteWorkerCommand(target, runtime, argv, remoteSocket), { forward: { remote: remoteSocket, local: localSocket }, ssh: opts.ssh }),
      },
    });
  } catch (error) {
    const stderr = isSupervisorError(error) ? (error.tails?.stderr ?? "") : "";
    if (stderr.includes(RUNTIME_ABSENT)) {
      throw new RemoteError("REMOTE_RUNTIME_ABSENT", `target ${JSON.stringify(target.name)}: no runtime at ${runtime.dir}`, { cause: error });
    }
    const ssh = stderr ? sshFailure(target, undefined, stderr) : null;
    if (ssh && ssh.code !== "REMOTE_CONNECT_FAILED") throw ssh;
    const code = isSupervisorError(error) ? error.code : "unknown";
    throw new RemoteError("REMOTE_START_FAILED", `target ${JSON.stringify(target.name)}: the worker did not start (${code}): ${(error as Error).message}${stderr ? ` | stderr: ${stderr.trim().slice(-500)}` : ""}`, { cause: error });
  }
  // The keeper writes the pid before it starts the worker, so the line is normally here already;
  // the two ssh channels are not ordered with each other, hence the bounded wait.
  let keeper = keeperPid(worker.stdoutTail);
  for (let waited = 0; keeper === null && waited < 10_000 && worker.state !== "dead"; waited += 5) {
    await sleep(5);
    keeper = keeperPid(worker.stdoutTail);
  }
  if (keeper === null) {
    await worker.hardStop("remote_pid_unknown");
    throw new RemoteError("REMOTE_START_FAILED", `target ${JSON.stringify(target.name)}: the keeper never reported the worker's pid`);
  }
  return { worker, remotePid: keeper.pid, remoteSocket, python: keeper.python };
}

/** Options of {@link openRemoteWorker}: those of {@link startRemoteWorker}, with the bundle instead of an installed runtime. */
export interface OpenRemoteOptions extends Omit<RemoteWorkerOptions, "runtime"> {
  bundle: RuntimeBundle;
  /** The install script's text (`installScript(pythonDir)`). */
  script: string;
}

/**
 * Start a worker on the target, installing the runtime first only when it is absent there. Warm,
 * this is one ssh connection: the worker's command checks the runtime's digest file itself. Cold
 * (the command answers {@link RUNTIME_ABSENT}, or the work directory is missing so the socket
 * forward fails), the install runs, then the start again.
 */
export async function openRemoteWorker(opts: OpenRemoteOptions): Promise<{ remote: RemoteWorker; runtime: InstalledRuntime }> {
  const { bundle, script, ...rest } = opts;
  const dir = `${opts.target.workdir}/klbr-${bundle.digest}`;
  try {
    const remote = await startRemoteWorker({ ...rest, runtime: { digest: bundle.digest, dir } });
    return { remote, runtime: { digest: bundle.digest, dir, copied: false, python: remote.python } };
  } catch (error) {
    // A work directory that does not exist yet fails the socket forward before the command runs:
    // the install creates it, and a forward the server really refuses fails the second start too.
    if (!isRemoteError(error) || (error.code !== "REMOTE_RUNTIME_ABSENT" && error.code !== "REMOTE_FORWARD_REFUSED")) throw error;
  }
  const runtime = await ensureRuntime(opts.target, bundle, script);
  const remote = await startRemoteWorker({ ...rest, runtime });
  return { remote, runtime };
}
