import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { CLI, HOST_DIR } from "./cli-run";

/** Pids whose command line is exactly `sleep <seconds>` (what the leftover-process tests start). */
export function sleepers(seconds: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8") === `sleep\u0000${seconds}\u0000`;
      } catch {
        return false;
      }
    });
}

/** Signal a daemon child and resolve once it exited (at once when it already has). */
export function stopDaemon(child: ChildProcess | null, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/** A `klbr serve` started from source: its process, its stderr so far, and when it is ready. */
export interface ServeDaemon {
  child: ChildProcess;
  stderr: () => string;
  /** Resolves once stderr holds the ready line; rejects with stderr if the daemon exits first. */
  ready: Promise<void>;
}

/**
 * Start `klbr <args>` (args hold `serve` and the options) as a daemon. The child is returned at
 * once, so a caller can register it for cleanup before awaiting `ready`: on "klbr: serving" by
 * default, or another line (`readyLine`) written after it.
 */
export function spawnServe(args: string[], opts: { env?: NodeJS.ProcessEnv; readyLine?: string } = {}): ServeDaemon {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"], env: opts.env ?? process.env });
  const readyLine = opts.readyLine ?? "klbr: serving";
  let stderr = "";
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (c) => {
      stderr += c;
      if (stderr.includes(readyLine)) resolve();
    });
    child.once("error", reject);
    child.once("exit", () => reject(new Error(`serve did not start: ${stderr}`)));
  });
  return { child, stderr: () => stderr, ready };
}
