import type { MechanismKind } from "./mechanism.js";
import type { WorkerGroup } from "./group.js";

/**
 * A worker group for the limit tests that only counts: OOM kills and refused forks read from
 * `counters` (which a test changes as the kernel would), nothing measured, nothing to kill.
 */
export function countingGroup(counters: { oom?: number; refused?: number }, kind: MechanismKind = "cgroup2"): WorkerGroup {
  return {
    kind,
    joinFiles: [],
    cpuMs: () => 0,
    resetPeak: () => undefined,
    peakBytes: () => undefined,
    oomKills: () => counters.oom,
    forkRefusals: () => counters.refused,
    kill: async () => undefined,
    remove: async () => undefined,
  } as unknown as WorkerGroup;
}
