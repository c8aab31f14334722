import { rmSync } from "node:fs";
import { killTreeOnce, type KnownProcs } from "./tree.js";

const live = new Map<number, { dir: string | undefined; known: KnownProcs | undefined }>();
let installed = false;

// 'exit' handlers must be synchronous: one kill pass per tree and a synchronous rm.
function onExit(): void {
  for (const [pid, { dir, known }] of live) {
    killTreeOnce(pid, known);
    if (dir !== undefined) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // nothing more can be done while exiting
      }
    }
  }
  live.clear();
}

/**
 * Register a live worker pid (its private dir, the processes known in its tree) to clean up if
 * the host process exits first.
 */
export function trackWorker(pid: number, dir?: string, known?: KnownProcs): void {
  live.set(pid, { dir, known });
  if (!installed) {
    installed = true;
    process.on("exit", onExit);
  }
}

/** Forget a worker that has ended. */
export function untrackWorker(pid: number): void {
  live.delete(pid);
}

/** Pids currently tracked (for tests and diagnostics). */
export function trackedWorkers(): number[] {
  return [...live.keys()];
}
