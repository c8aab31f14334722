import { availableParallelism } from "node:os";

/**
 * The CPU limit of a cgroup: the kernel bounds a rate (cpu.max), not a total, so the host reads
 * the group's CPU time and ends the tree once it reaches the limit. The next read is due when the
 * tree, running on every CPU, could have spent what is left: the overshoot stays below one
 * interval (at most 500 ms of wall time, at least 20 ms) times the number of CPUs.
 */
export function watchCpu(read: () => number | undefined, limitMs: number, onOver: (usedMs: number) => void, cpus = availableParallelism()): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = () => {
    if (stopped) return;
    const used = read();
    if (used === undefined) return; // the group is gone: the worker's exit path takes over
    if (used >= limitMs) {
      stopped = true;
      onOver(used);
      return;
    }
    timer = setTimeout(check, nextCheckMs(limitMs - used, cpus));
    timer.unref();
  };
  check();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Wall time in which `cpus` CPUs could spend `remainingMs`, within [20, 500] ms. */
export function nextCheckMs(remainingMs: number, cpus: number): number {
  return Math.min(500, Math.max(20, Math.floor(remainingMs / Math.max(1, cpus))));
}
