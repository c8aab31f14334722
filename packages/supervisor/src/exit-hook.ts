import { rmSync } from "node:fs";
import { killTaggedOnce, type TreeTag } from "./tagged.js";
import { killTreeOnce, type KnownProcs } from "./tree.js";

const live = new Map<number, { dir: string | undefined; known: KnownProcs | undefined; tag: TreeTag | undefined }>();
let installed = false;

// 'exit' handlers must be synchronous: one kill pass per tree, one sweep for all tags, a synchronous rm.
function onExit(): void {
  const tags: TreeTag[] = [];
  for (const [pid, { known, tag }] of live) {
    killTreeOnce(pid, known);
    if (tag) tags.push(tag);
  }
  killTaggedOnce(tags);
  for (const { dir } of live.values()) {
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
 * Register a live worker pid (its private dir, the processes known in its tree, the tag its
 * generation carries) to clean up if the host process exits first.
 */
export function trackWorker(pid: number, dir?: string, known?: KnownProcs, tag?: TreeTag): void {
  live.set(pid, { dir, known, tag });
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
