/**
 * One worker's (or one `workspace.run` command's) cgroup, whatever the cgroup version: what the
 * guard's child joins before it executes the command, the counters the host reads, the kill.
 */
export interface WorkerGroup {
  readonly kind: "cgroup2" | "cgroup1";
  /** The `cgroup.procs` files the command joins (one per v1 hierarchy, one in v2). */
  readonly joinFiles: readonly string[];
  /** The group's CPU time so far in ms, every process that ever ran in it included. */
  cpuMs(): number | undefined;
  /** Start a new peak measurement (a cell starts). */
  resetPeak(): void;
  /** The highest memory use since the last {@link resetPeak} (undefined: not measurable here). */
  peakBytes(): number | undefined;
  /** Processes the kernel's OOM killer ended in the group so far. */
  oomKills(): number | undefined;
  /** Forks and clones the pids limit refused so far. */
  forkRefusals(): number | undefined;
  /** Kill every process in the group. */
  kill(): Promise<void>;
  /** Kill what is left and remove the group (idempotent). */
  remove(): Promise<void>;
}

/** The counters read when a cell starts, to tell what happened during it. */
export interface GroupMark {
  cpuMs: number | undefined;
  oomKills: number | undefined;
  forkRefusals: number | undefined;
}

/** The counters a verdict needs for `limits` (one read each; those of unset limits are not read). */
export function markGroup(group: WorkerGroup, limits: { memoryBytes?: number; procs?: number } = { memoryBytes: 1, procs: 1 }): GroupMark {
  return {
    cpuMs: undefined,
    oomKills: limits.memoryBytes !== undefined ? group.oomKills() : undefined,
    forkRefusals: limits.procs !== undefined ? group.forkRefusals() : undefined,
  };
}
