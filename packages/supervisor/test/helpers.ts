import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWorker, type StartWorkerOptions, type Worker } from "../src/index.js";
import { isAlive } from "../src/tree.js";

/** Absolute path of a fake worker script in test/fakes/. */
export function fakePath(name: string): string {
  return fileURLToPath(new URL(`./fakes/${name}.mjs`, import.meta.url));
}

/** The repository's python/ directory (for PYTHONPATH). */
export const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));

let seq = 0;

/** Start a fake worker (a node script) with test-friendly defaults. */
export function startFake(name: string, opts: Partial<StartWorkerOptions> = {}): Promise<Worker> {
  return startWorker({
    role: "workbench",
    sessionId: "test",
    generation: `g-${process.pid}-${++seq}`,
    command: [process.execPath, fakePath(name)],
    handshakeTimeoutMs: 5000,
    ...opts,
  });
}

/** Start the real Python worker. */
export function startPython(opts: Partial<StartWorkerOptions> = {}): Promise<Worker> {
  return startWorker({
    role: "workbench",
    sessionId: "test",
    generation: `g-${process.pid}-${++seq}`,
    pythonPath: [PYTHON_DIR],
    ...opts,
  });
}

/** True when no process of `pids` is alive (zombies count as gone). */
export function noneAlive(pids: number[]): boolean {
  return pids.every((pid) => !isAlive(pid));
}

/**
 * Poll until no process of `pids` is alive, up to `timeoutMs`: a SIGKILL sent by another process
 * (an exit hook) is delivered asynchronously, and a loaded machine may not have scheduled the
 * target to die yet when the sender returns.
 */
export async function noneAliveWithin(pids: number[], timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!noneAlive(pids)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Whether a path exists. */
export function exists(path: string): boolean {
  return existsSync(path);
}

/** The pid a fake logs first on stderr. */
export function loggedPid(stderr: string): number {
  const m = /pid (\d+)/.exec(stderr);
  if (!m) throw new Error(`no pid in ${JSON.stringify(stderr)}`);
  return Number(m[1]);
}

/** Resolve after `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Poll `check` until it holds or `timeoutMs` passes; resolves with its last value. */
export async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= deadline) return check();
    await sleep(10);
  }
  return true;
}

/**
 * A point a cell reaches, made observable: `touch` is a Python statement creating a fresh file,
 * `reached()` polls (bounded) until it exists. A test that must interrupt a cell only once the cell
 * sits where it swallows or blocks the interrupt waits on this, not on a sleep a loaded machine
 * outlasts (interrupted earlier, the cell ends at the message rung instead).
 */
export function checkpoint(): { touch: string; reached: () => Promise<boolean>; remove: () => void } {
  const path = join(tmpdir(), `klbr-cp-${process.pid}-${randomBytes(6).toString("hex")}`);
  return {
    touch: `open(${JSON.stringify(path)}, 'w').close()`,
    reached: () => waitFor(() => existsSync(path), 15_000),
    remove: () => rmSync(path, { force: true }),
  };
}

/** The value of `name` in a process's initial environment (/proc/<pid>/environ), if set. */
export function environValue(pid: number, name: string): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, "latin1")
    .split("\0")
    .find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/** Start a detached `sleep 1000` with `env` over this process's environment; returns its pid. */
export function startSleep(env: Record<string, string> = {}): number {
  const child = spawn("sleep", ["1000"], { env: { ...process.env, ...env }, stdio: "ignore", detached: true });
  child.unref();
  return child.pid as number;
}

/** SIGKILL each pid that is still alive (test cleanup). */
export function killAlive(pids: number[]): void {
  for (const pid of pids) {
    if (!isAlive(pid)) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}
