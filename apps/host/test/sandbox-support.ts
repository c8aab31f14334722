// What the sandbox battery (sandbox*.test.ts) shares: a daemon under test, cells that report as
// JSON, and processes found by a marker in their command line.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ControlClient } from "../src/control/client";
import { dataLayout } from "../src/paths";
import type { ExecutionReport } from "../src/runtime/completion";
import { CLI, HOST_DIR } from "./cli-run";

/** The CLI (see cli-run.ts): from source unless KLBR_TEST_BUILT=1. */
export { CLI };


/** Whether bwrap can make a sandbox here; in CI its absence fails the suite instead of skipping it. */
export function bwrapAvailable(): boolean {
  let ok = false;
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "true"], { stdio: "ignore" });
    ok = true;
  } catch {
    ok = false;
  }
  if (!ok && process.env.CI === "true") {
    throw new Error("bwrap (Debian: apt-get install bubblewrap) cannot start a sandbox here; in CI the sandbox battery never skips");
  }
  return ok;
}

/** Run one klbr command to completion. */
export function klbr(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd: HOST_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `klbr serve` under test and a control connection to it. */
export interface Daemon {
  child: ChildProcess;
  client: ControlClient;
  stderr: () => string;
}

/** Start `klbr serve` with `args` and `env`, wait until it serves, connect to it. */
export async function startDaemon(dataDir: string, workspace: string, args: string[], env: NodeJS.ProcessEnv): Promise<Daemon> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "serve", ...args], {
    cwd: HOST_DIR,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (stderr.includes("klbr: serving")) done(resolve);
    };
    const onExit = () => done(() => reject(new Error(`serve exited: ${stderr}`)));
    const done = (then: () => void) => {
      child.stderr!.off("data", onData);
      child.off("exit", onExit);
      then();
    };
    child.stderr!.on("data", onData);
    child.once("exit", onExit);
  });
  const client = await ControlClient.connect(dataLayout(dataDir).controlSocket);
  return { child, client, stderr: () => stderr };
}

/** Stop a daemon politely (SIGTERM) unless it is gone already. */
export function stopDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/** Run a cell through the daemon. */
export async function exec(client: ControlClient, code: string): Promise<ExecutionReport> {
  return (await client.request({ op: "exec", code })) as ExecutionReport;
}

/** Run a cell that prints one JSON object as its last stdout line; that object. */
export async function probe(client: ControlClient, code: string): Promise<Record<string, unknown>> {
  const report = await exec(client, `import json, os, sys\nr = {}\n${code}\nprint(json.dumps(r))`);
  const stdout = report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  const last = stdout.trim().split("\n").at(-1);
  if (report.status !== "ok" || !last) throw new Error(`probe cell ${report.status}: ${report.error ?? JSON.stringify(report.output)}`);
  return JSON.parse(last) as Record<string, unknown>;
}

/** Python that stores in r[key] the value of `expr`, or the name of what it raised. */
export function attempt(key: string, expr: string): string {
  return `try:\n    r[${JSON.stringify(key)}] = ${expr}\nexcept BaseException as e:\n    r[${JSON.stringify(key)}] = 'raised ' + type(e).__name__`;
}

/** A unique word to find a process by in its command line. */
export function marker(label: string): string {
  return `klbr-mark-${label}-${randomBytes(6).toString("hex")}`;
}

/**
 * Python that starts a process that escapes every other net: `setsid` (own session and group),
 * `env -i` (no KLBR_TREE tag), orphaned at once (its shell exits); its command line carries `mark`.
 * The cell goes on once that process runs the final program: the mark is already in the command
 * lines of the shell, `setsid` and `env` on the way, and while one of them execs the next, the
 * same pid's /proc/<pid>/cmdline reads empty, so a host-side look right after the cell could miss it.
 */
export function escapeCode(mark: string): string {
  return [
    "import subprocess, time",
    `subprocess.run(['sh', '-c', 'setsid env -i ' + sys.executable + ' -c "import time; time.sleep(1000)" ${mark} </dev/null >/dev/null 2>&1 &'])`,
    "def _running(mark):",
    "    final = '\\0'.join([sys.executable, '-c', 'import time; time.sleep(1000)', mark]).encode() + b'\\0'",
    "    for p in filter(str.isdigit, os.listdir('/proc')):",
    "        try:",
    "            if open(f'/proc/{p}/cmdline', 'rb').read() == final: return True",
    "        except OSError: pass",
    "    return False",
    "_deadline = time.monotonic() + 30",
    `while not _running(${JSON.stringify(mark)}):`,
    "    if time.monotonic() > _deadline: raise RuntimeError('the escaped process never came to run its program')",
    "    time.sleep(0.01)",
  ].join("\n");
}

/** Host pids whose command line holds `mark`. */
export function marked(mark: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "latin1").includes(mark)) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out.filter((pid) => pid !== process.pid && !isZombie(pid));
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return /^\S+ \(.*\) [ZX] /.test(stat);
  } catch {
    return true;
  }
}

/** True while `pid` runs (not a zombie). */
export function alive(pid: number): boolean {
  return !isZombie(pid);
}

/** Poll `check` every 10 ms until it holds or `timeoutMs` passes; its last value. */
export async function until(check: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= deadline) return check();
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** SIGKILL every process carrying `mark` (the test's own clean-up, for what a mode lets survive). */
export function killMarked(mark: string): void {
  for (const pid of marked(mark)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}
