import type { Readable } from "node:stream";
import { guardLaunch, killTagged, killTree, recordRoot, sendCommandEnv, treeTag, watchGuard, type EnvHandoff, type LimitsMechanism, type LimitVerdict } from "@klbr/supervisor";
import { execa } from "execa";
import { BoundedOutput } from "./workspace-output";
import { commandLimits } from "./workspace-limits";

/** How long the pipes may stay open once the command and every process of its tree are killed. */
export const RUN_DRAIN_GRACE_MS = 1000;

/** How long after the guard's exit its status pipe may take to end; past it, its sweep counts as unreported. */
const GUARD_REPORT_WAIT_MS = 100;

/** What one command did, as the host observed it. */
export interface CommandOutcome {
  /** The spawn failed (no such program, not executable): the message, else null. */
  spawnError: string | null;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** `signal` was aborted (the cell ended) before the command did. */
  cancelled: boolean;
  stdout: string;
  stderr: string;
  truncatedBytes: number;
  /** The resource limit that ended the command (C17), read from the mechanism; null otherwise. */
  limit: LimitVerdict | null;
}

/** How to run one command. */
export interface CommandOptions {
  argv: string[];
  cwd: string;
  /** The command's environment: it reaches the command alone. */
  env: Record<string, string>;
  /** The environment of what runs on the host to start it (the guard, bwrap): the host's own minimal one. */
  launcher: Record<string, string>;
  /** "bwrap" when argv starts with a bwrap prefix: the environment is handed to the command inside. */
  handoff?: EnvHandoff;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** The host's limits mechanism: the command gets the same limits, in a group of its own (C17). */
  limits?: LimitsMechanism;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Run `argv` under the supervisor's guard (it dies with the host, even on kill -9, and kills what
 * the command leaves below it), in its own process group, tagged with a fresh tree tag. When it
 * ends, times out or loses its cell, its whole tree goes: the group, every descendant, every
 * process carrying the tag (a `setsid` daemon it left holding the pipes or not). The call never
 * waits on a pipe longer than {@link RUN_DRAIN_GRACE_MS} after that, so it is bounded by
 * `timeoutMs` plus the kill.
 */
export async function runCommand(opts: CommandOptions): Promise<CommandOutcome> {
  const tag = treeTag();
  const budget = { left: opts.maxOutputBytes };
  const stdout = new BoundedOutput(budget);
  const stderr = new BoundedOutput(budget);
  // A group of its own before the spawn: LIMITS_UNAVAILABLE refuses the command, never runs it unlimited.
  const limits = commandLimits(opts.limits);
  // The cell's variables (LD_PRELOAD...) go to the command only, never to the guard or bwrap.
  const launch = guardLaunch(opts.argv, { ...opts.env, [tag.name]: tag.value }, { ...opts.launcher, [tag.name]: tag.value }, opts.handoff);
  const [file, ...args] = limits.argv([launch.file, ...launch.args]);
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: launch.env,
    extendEnv: false,
    // fd 3: the guard's status line; fd 4: the command's environment.
    stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
    buffer: false,
    reject: false,
    detached: true,
    encoding: "buffer",
  });
  const pid = child.pid;
  if (pid === undefined) {
    const result = await child;
    await limits.release();
    return { ...blank(stdout, stderr), spawnError: result.shortMessage ?? result.message ?? "spawn failed" };
  }
  // Recorded before any reap can free the pid, so no kill below can hit a process that reused it.
  const known = recordRoot(pid);
  sendCommandEnv(child.stdio[4], launch.commandEnv);
  const report = watchGuard(child.stdio[3] as Readable);
  const streams = [child.stdout, child.stderr];
  child.stdout?.on("data", (c: Buffer) => stdout.push(c));
  child.stderr?.on("data", (c: Buffer) => stderr.push(c));
  const drained = Promise.all(
    streams.map((s) => new Promise<void>((resolve) => (s && !s.destroyed ? s.once("close", () => resolve()) : resolve()))),
  );
  void child.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });

  let killing: Promise<void> | undefined;
  const killAll = (): Promise<void> =>
    (killing ??= (async () => {
      await killTree(pid, known, undefined, true);
      await killTagged(tag);
    })());
  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void killAll();
  }, opts.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    void killAll();
  };
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  limits.watch(() => void killAll());

  const exit = await exited;
  const limit = limits.verdict(exit);
  clearTimeout(timer);
  opts.signal?.removeEventListener("abort", onAbort);
  // The command is over: what it left running (background jobs, setsid'd daemons) has no scope left.
  // The guard killed it all when it says it swept clean (it is the subreaper of the whole tree);
  // otherwise the host searches for it, reading every process on the machine.
  const clean = await Promise.race([report.clean, sleep(GUARD_REPORT_WAIT_MS).then(() => false)]);
  if (killing) await killing;
  killing = undefined;
  if (!clean) await killAll();
  await Promise.race([drained, sleep(RUN_DRAIN_GRACE_MS)]);
  for (const s of streams) s?.destroy();
  await limits.release();
  const reported = await report.status;
  if ("error" in reported) return { ...blank(stdout, stderr), spawnError: reported.error };
  return {
    spawnError: null,
    exitCode: timedOut || cancelled ? null : exit.code,
    signal: exit.signal,
    timedOut,
    cancelled,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncatedBytes: stdout.dropped + stderr.dropped,
    limit,
  };
}

function blank(stdout: BoundedOutput, stderr: BoundedOutput): CommandOutcome {
  return { spawnError: null, exitCode: null, signal: null, timedOut: false, cancelled: false, stdout: stdout.text(), stderr: stderr.text(), truncatedBytes: 0, limit: null };
}
