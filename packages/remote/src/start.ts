import { randomBytes } from "node:crypto";
import { isSupervisorError, startWorker, type StartWorkerOptions, type Worker } from "@klbr/supervisor";
import { RemoteError } from "./errors.js";
import type { InstalledRuntime } from "./install.js";
import { shellJoin, shellQuote, sshArgv } from "./ssh-argv.js";
import { sshFailure } from "./ssh-run.js";
import type { Target } from "./targets.js";

/** The first line a keeper writes (python/klbr/worker/keeper.py). */
export const KEEPER_PID_PREFIX = "klbr.keeper pid=";

/** Options of {@link startRemoteWorker}: the supervisor's timing options pass through. */
export interface RemoteWorkerOptions
  extends Pick<StartWorkerOptions, "interruptGraceMs" | "sigintGraceMs" | "shutdownGraceMs" | "handshakeTimeoutMs" | "onStrayHostRequest"> {
  target: Target;
  runtime: InstalledRuntime;
  sessionId: string;
  generation: string;
  /** The ssh program (default `ssh`). */
  ssh?: string;
}

/** A workbench worker running on a target, supervised here like a local one. */
export interface RemoteWorker {
  worker: Worker;
  /** The worker's pid on the target (the keeper's child). */
  remotePid: number;
  /** The worker's socket path on the target (the forward's far end). */
  remoteSocket: string;
}

/** The remote command line: the work directory, the runtime on PYTHONPATH, then the worker's argv. */
export function remoteWorkerCommand(target: Target, runtime: InstalledRuntime, workerArgv: string[]): string {
  return `cd ${shellQuote(target.workdir)} && exec env ${shellQuote(`PYTHONPATH=${runtime.dir}`)} ${shellJoin(workerArgv)}`;
}

/** The keeper's pid line in a stdout tail, or null. */
export function keeperPid(stdout: string): number | null {
  const match = /(?:^|\n)klbr\.keeper pid=(\d+)\n/.exec(stdout);
  return match ? Number(match[1]) : null;
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
  const remoteSocket = `${target.workdir}/klbr-r-${randomBytes(12).toString("hex")}.sock`;
  let worker: Worker;
  try {
    worker = await startWorker({
      role: "workbench",
      sessionId: opts.sessionId,
      generation: opts.generation,
      command: [target.python, "-m", "klbr.worker", "--token-stdin"],
      handshakeTimeoutMs: opts.handshakeTimeoutMs ?? 30_000,
      shutdownGraceMs: opts.shutdownGraceMs ?? 10_000,
      ...(opts.interruptGraceMs !== undefined ? { interruptGraceMs: opts.interruptGraceMs } : {}),
      ...(opts.sigintGraceMs !== undefined ? { sigintGraceMs: opts.sigintGraceMs } : {}),
      ...(opts.onStrayHostRequest ? { onStrayHostRequest: opts.onStrayHostRequest } : {}),
      transport: {
        socketPath: remoteSocket,
        wrap: (argv, localSocket) =>
          sshArgv(target, remoteWorkerCommand(target, runtime, argv), { forward: { remote: remoteSocket, local: localSocket }, ...(opts.ssh ? { ssh: opts.ssh } : {}) }),
      },
    });
  } catch (error) {
    const stderr = isSupervisorError(error) ? (error.tails?.stderr ?? "") : "";
    const ssh = stderr ? sshFailure(target, undefined, stderr) : null;
    if (ssh && ssh.code !== "REMOTE_CONNECT_FAILED") throw ssh;
    const code = isSupervisorError(error) ? error.code : "unknown";
    throw new RemoteError("REMOTE_START_FAILED", `target ${JSON.stringify(target.name)}: the worker did not start (${code}): ${(error as Error).message}${stderr ? ` | stderr: ${stderr.trim().slice(-500)}` : ""}`, { cause: error });
  }
  // The keeper writes the pid before it starts the worker, so the line is normally here already;
  // the two ssh channels are not ordered with each other, hence the bounded wait.
  let remotePid = keeperPid(worker.stdoutTail);
  for (let waited = 0; remotePid === null && waited < 10_000 && worker.state !== "dead"; waited += 5) {
    await sleep(5);
    remotePid = keeperPid(worker.stdoutTail);
  }
  if (remotePid === null) {
    await worker.hardStop("remote_pid_unknown");
    throw new RemoteError("REMOTE_START_FAILED", `target ${JSON.stringify(target.name)}: the keeper never reported the worker's pid`);
  }
  return { worker, remotePid, remoteSocket };
}
