import type { GroupMark, WorkerGroup } from "./group.js";
import type { MechanismKind } from "./mechanism.js";
import { formatValue, type LimitReason, type ResourceLimits } from "./spec.js";

/** Why a limit ended a worker or command, read from the mechanism. */
export interface LimitVerdict {
  reason: LimitReason | "file_limit";
  detail: string;
}

/** How the process ended, as the host saw it. */
export interface ExitSeen {
  code: number | null;
  signal: string | null;
}

/** Signal numbers the guard's sandbox (bwrap) reports as exit code 128+N. */
const SIGXCPU = 24;
const SIGXFSZ = 25;

function bySignal(exit: ExitSeen, name: string, num: number): boolean {
  return exit.signal === name || exit.code === 128 + num;
}

/**
 * What ended a dead worker or command, from the mechanism's own records (never guessed):
 * OOM kills counted by the memory cgroup since `mark`, forks refused by the pids cgroup since
 * `mark`, or, under rlimits, death by SIGXCPU (RLIMIT_CPU) or SIGXFSZ (RLIMIT_FSIZE). The CPU limit
 * of a cgroup is the host's own kill ({@link watchCpu}) and is named where it is made.
 */
export function limitVerdict(kind: MechanismKind, limits: ResourceLimits, group: WorkerGroup | undefined, mark: GroupMark | undefined, exit: ExitSeen): LimitVerdict | undefined {
  // A process that exited 0 survived whatever the limits refused it (a MemoryError, a fork).
  if (exit.code === 0 && exit.signal === null) return undefined;
  if (group && mark) {
    const oom = group.oomKills();
    if (limits.memoryBytes !== undefined && oom !== undefined && oom > (mark.oomKills ?? 0)) {
      return { reason: "memory_limit", detail: `the tree reached the memory limit (${formatValue("memory", limits.memoryBytes)}) and the kernel's OOM killer ended it (${kind})` };
    }
    const refused = group.forkRefusals();
    if (limits.procs !== undefined && refused !== undefined && refused > (mark.forkRefusals ?? 0)) {
      return { reason: "procs_limit", detail: `the tree reached the procs limit (${limits.procs}): the kernel refused ${refused - (mark.forkRefusals ?? 0)} fork(s) and the worker died (${kind})` };
    }
  }
  if (kind === "rlimit" && limits.cpuMs !== undefined && bySignal(exit, "SIGXCPU", SIGXCPU)) {
    return { reason: "cpu_limit", detail: `a process reached the cpu limit (${formatValue("cpu", limits.cpuMs)} per process, RLIMIT_CPU) and died of SIGXCPU` };
  }
  if (limits.fileBytes !== undefined && bySignal(exit, "SIGXFSZ", SIGXFSZ)) {
    return { reason: "file_limit", detail: `a write passed the file limit (${formatValue("file", limits.fileBytes)}, RLIMIT_FSIZE) and the process died of SIGXFSZ` };
  }
  return undefined;
}

/** The record of a cgroup's CPU limit reached (the host's own kill). */
export function cpuVerdict(limits: ResourceLimits, usedMs: number, kind: MechanismKind): LimitVerdict {
  return { reason: "cpu_limit", detail: `the tree used ${usedMs} ms of CPU time, the cpu limit is ${formatValue("cpu", limits.cpuMs ?? 0)} (${kind})` };
}
