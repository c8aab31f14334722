import { readFileSync, writeFileSync } from "node:fs";
import type { WorkerGroup } from "./group.js";

/** What one cell cost (C17): null where the mechanism cannot measure it. */
export interface CellUsage {
  cpuMs: number | null;
  peakRssBytes: number | null;
}

/** Measures cells one after another, and the generation's totals. */
export interface UsageMeter {
  /** A cell starts. */
  begin(): void;
  /** The cell that began last ended: what it cost. */
  end(): CellUsage;
  /** The generation so far: CPU time of the whole tree, and the highest peak of any cell or of now. */
  totals(): CellUsage;
}

const orNull = (n: number | undefined): number | null => (n === undefined ? null : n);

/** From the worker's cgroup: its whole tree, every process that ever ran in it. */
export class GroupMeter implements UsageMeter {
  readonly #group: WorkerGroup;
  #cpuAtBegin: number | undefined;
  #maxPeak: number | undefined;

  constructor(group: WorkerGroup) {
    this.#group = group;
  }

  begin(): void {
    this.#cpuAtBegin = this.#group.cpuMs();
    this.#group.resetPeak();
  }

  end(): CellUsage {
    const cpu = this.#group.cpuMs();
    const peak = this.#group.peakBytes();
    if (peak !== undefined) this.#maxPeak = Math.max(this.#maxPeak ?? 0, peak);
    return { cpuMs: cpu === undefined || this.#cpuAtBegin === undefined ? null : cpu - this.#cpuAtBegin, peakRssBytes: orNull(peak) };
  }

  totals(): CellUsage {
    return { cpuMs: orNull(this.#group.cpuMs()), peakRssBytes: orNull(this.#maxPeak) };
  }
}

/** utime+stime+cutime+cstime of `/proc/<pid>/stat` in ms: the process and the children it waited for. */
export function procCpuMs(pid: number, ticksPerSecond = 100): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Fields 14-17 of proc(5) (utime, stime, cutime, cstime) are 11-14 after the command name.
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return Number.isFinite(ticks) ? Math.round((ticks * 1000) / ticksPerSecond) : undefined;
}

/** A `kB` line of `/proc/<pid>/status` in bytes (VmHWM: the peak resident set; VmRSS: now). */
export function procStatusBytes(pid: number, key: "VmHWM" | "VmRSS"): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/**
 * Without a cgroup: the worker process's own counters, as getrusage(RUSAGE_SELF + CHILDREN) keeps
 * them (/proc/<pid>/stat), and its peak resident set (VmHWM), reset at each cell by writing 5 to
 * /proc/<pid>/clear_refs. Children still running at the cell's end are not counted; a peak that
 * could not be reset counts only when the cell raised it.
 */
export class ProcMeter implements UsageMeter {
  readonly #pid: () => number | undefined;
  #cpuAtBegin: number | undefined;
  #peakAtBegin: number | undefined;
  #reset = false;
  #maxPeak: number | undefined;

  constructor(pid: () => number | undefined) {
    this.#pid = pid;
  }

  begin(): void {
    const pid = this.#pid();
    if (pid === undefined) return;
    this.#cpuAtBegin = procCpuMs(pid);
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, "5");
      this.#reset = true;
    } catch {
      this.#reset = false;
    }
    this.#peakAtBegin = procStatusBytes(pid, "VmHWM");
  }

  end(): CellUsage {
    const pid = this.#pid();
    if (pid === undefined) return { cpuMs: null, peakRssBytes: null };
    const cpu = procCpuMs(pid);
    const peak = procStatusBytes(pid, "VmHWM");
    const cellPeak = peak === undefined || this.#peakAtBegin === undefined ? undefined : this.#reset || peak > this.#peakAtBegin ? peak : undefined;
    if (peak !== undefined) this.#maxPeak = Math.max(this.#maxPeak ?? 0, peak);
    return { cpuMs: cpu === undefined || this.#cpuAtBegin === undefined ? null : cpu - this.#cpuAtBegin, peakRssBytes: orNull(cellPeak) };
  }

  totals(): CellUsage {
    const pid = this.#pid();
    const peak = pid === undefined ? undefined : procStatusBytes(pid, "VmHWM");
    if (peak !== undefined) this.#maxPeak = Math.max(this.#maxPeak ?? 0, peak);
    return { cpuMs: orNull(pid === undefined ? undefined : procCpuMs(pid)), peakRssBytes: orNull(this.#maxPeak) };
  }
}
