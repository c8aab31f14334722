import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

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
