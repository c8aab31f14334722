import type { Readable } from "node:stream";
import { execa } from "execa";
import type { WorkerCommand } from "./command.js";
import { drainInto } from "./drain.js";
import { trackWorker } from "./exit-hook.js";
import { watchGuard } from "./guard.js";
import { guardLaunch, sendCommandEnv, type EnvHandoff } from "./guard-launch.js";
import { pin, type PinnedProc } from "./sandbox.js";
import type { ByteTail } from "./tail.js";
import type { TreeTag } from "./tagged.js";
import { recordRoot, type KnownProcs } from "./tree.js";

/** A spawned guard and the worker command under it, as the rest of the worker sees them. */
export interface SpawnedWorker {
  /** The guard's pid: the root of the generation's tree and its process group. */
  pid: number;
  /** The transport's control pipe (the spawned command's stdin, the token already written). */
  control: NodeJS.WritableStream | undefined;
  /** stdout and stderr: destroyed at the very end, so a process that escaped every kill cannot hold the host. */
  streams: Array<{ destroy(): unknown } | null | undefined>;
  /** Both output pipes have closed. */
  stdioClosed: Promise<void>;
  /** The process's `exit` event was seen. */
  exitSeen: Promise<void>;
  /** Once the guard's status pipe ends: whether the guard's final sweep left nothing (see {@link watchGuard}). */
  guardClean: Promise<boolean>;
}

/** Nothing was spawned: `failed` says why once execa has. */
export interface SpawnFailure {
  failed: Promise<{ message: string; cause: unknown }>;
}

/** What one spawn needs besides the command, and where it reports. */
export interface SpawnSpec {
  command: WorkerCommand;
  cwd: string | undefined;
  /** Written as the first line of stdin, which stays open as the transport's control pipe. */
  transportToken: string | undefined;
  /** A spare: stdin is a pipe kept open for the identity line (written at bind). */
  spare: boolean;
  dir: string;
  known: KnownProcs;
  tag: TreeTag;
  /** The environment of the guard (and bwrap, ssh): never the worker's, which goes to the worker alone. */
  launcher: Record<string, string>;
  envHandoff: EnvHandoff | undefined;
  stdout: ByteTail;
  stderr: ByteTail;
  /** The guard reported its one child (pinned; undefined when already gone). */
  onInner(inner: PinnedProc | undefined): void;
  /** The guard reported that it could not run the command. */
  onGuardFailed(error: string): void;
  onExit(code: number | null, signal: string | null): void;
  /** Adds what the guard applies before the command runs (the C17 limits' `--limits`). */
  guardOptions?: (guard: [string, ...string[]]) => [string, ...string[]];
}

/**
 * Spawn `command` under the guard, in its own process group: it dies with the host (even kill -9),
 * and as a subreaper it keeps and kills whatever the worker's tree leaves behind when the worker
 * dies, setsid'd or env-cleared. Synchronous up to the pid's recording, so the pid is still ours.
 */
export function spawnGuarded(spec: SpawnSpec): SpawnedWorker | SpawnFailure {
  const { command } = spec;
  const transport = spec.transportToken !== undefined;
  const stdinPipe = transport || spec.spare;
  // The worker's environment (passed names, token) reaches the worker alone (guard-launch.ts);
  // through a transport, the spawned command is ssh, which runs here: it gets the launcher's.
  const launch = guardLaunch([command.file, ...command.args], transport ? spec.launcher : command.env, spec.launcher, spec.envHandoff);
  const guard: [string, ...string[]] = [launch.file, ...launch.args];
  const [file, ...args] = spec.guardOptions ? spec.guardOptions(guard) : guard;
  const subprocess = execa(file, args, {
    detached: true,
    cleanup: false,
    // fd 3: the guard's status line; fd 4: the worker's environment.
    stdio: [stdinPipe ? "pipe" : "ignore", "pipe", "pipe", "pipe", "pipe"],
    buffer: false,
    reject: false,
    encoding: "buffer",
    extendEnv: false,
    env: launch.env,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
  });
  if (subprocess.pid === undefined) {
    return {
      failed: subprocess.then((result) => ({
        message: `could not spawn ${JSON.stringify(file)}: ${result.message ?? "unknown error"}`,
        cause: result.cause,
      })),
    };
  }
  const pid = subprocess.pid;
  sendCommandEnv(subprocess.stdio[4], launch.commandEnv);
  let control: NodeJS.WritableStream | undefined;
  if (stdinPipe && subprocess.stdin) {
    // The command may die before reading it (EPIPE): its exit tells the story, not this stream.
    subprocess.stdin.on("error", () => undefined);
    if (transport) subprocess.stdin.write(`${spec.transportToken}\n`);
    control = subprocess.stdin;
  }
  // Not reaped before this synchronous code ends, so the pid is still ours: record its start
  // time, and no tree kill after the reap can hit a process that reused the pid.
  recordRoot(pid, spec.known);
  trackWorker(pid, spec.dir, spec.known, spec.tag);
  const report = watchGuard(subprocess.stdio[3] as Readable);
  void report.status.then((status) => {
    if ("pid" in status) spec.onInner(pin(status.pid));
    // Unreported (the guard could not even run): the exit tells the story, as for any early exit.
    else if (status.reported) spec.onGuardFailed(`could not run ${JSON.stringify(command.file)}: ${status.error}`);
  });
  drainInto(subprocess.stdout, spec.stdout);
  drainInto(subprocess.stderr, spec.stderr);
  const stdioClosed = Promise.all(
    [subprocess.stdout, subprocess.stderr].map(
      (stream) => new Promise<void>((resolve) => (stream && !stream.destroyed ? stream.once("close", () => resolve()) : resolve())),
    ),
  ).then(() => undefined);
  const exitSeen = new Promise<void>((resolve) => subprocess.once("exit", () => resolve()));
  subprocess.once("exit", (code, signal) => spec.onExit(code, signal));
  void subprocess.catch(() => undefined);
  return { pid, control, streams: [subprocess.stdout, subprocess.stderr], stdioClosed, exitSeen, guardClean: report.clean };
}
