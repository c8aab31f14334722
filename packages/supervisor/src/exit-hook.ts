import { killTreeOnce } from "./tree.js";

const live = new Set<number>();
let installed = false;

function onExit(): void {
  for (const pid of live) killTreeOnce(pid);
  live.clear();
}

/** Register a live worker pid whose tree is SIGKILLed if the host process exits first. */
export function trackWorker(pid: number): void {
  live.add(pid);
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
  return [...live];
}
