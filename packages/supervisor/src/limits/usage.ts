import { ControlFile } from "./cgroup-files.js";
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
  /** Let go of what it holds open. */
  close(): void;
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

  close(): void {
    // the group's files are closed with the group
  }
}

/** utime+stime+cutime+cstime of a `/proc/<pid>/stat` text in ms: the process and the children it waited for. */
export function statCpuMs(text: string | undefined, ticksPerSecond = 100): number | undefined {
  if (text === undefined) return undefined;
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Fields 14-17 of proc(5) (utime, stime, cutime, cstime) are 11-14 after the command name.
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return Number.isFinite(ticks) ? Math.round((ticks * 1000) / ticksPerSecond) : undefined;
}

/** A `kB` line of a `/proc/<pid>/status` text in bytes (VmHWM: the peak resident set). */
export function statusBytes(text: string | undefined, key: "VmHWM" | "VmRSS"): number | undefined {
  if (text === undefined) return undefined;
  const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, "m").exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
}

/** A process's stat, status and clear_refs, each through one open descriptor. */
class ProcFiles {
  readonly stat: ControlFile;
  readonly status: ControlFile;
  readonly clearRefs: ControlFile;
  constructor(readonly pid: number) {
    this.stat = new ControlFile(`/proc/${pid}/stat`);
    this.status = new ControlFile(`/proc/${pid}/status`);
    this.clearRefs = new ControlFile(`/proc/${pid}/clear_refs`);
  }
  close(): void {
    for (const f of [this.stat, this.status, this.clearRefs]) f.close();
  }
}

/**
 * Without a cgroup: the worker process's own counters, as getrusage(RUSAGE_SELF + CHILDREN) keeps
 * them (/proc/<pid>/stat), and its peak resident set (VmHWM), reset at each cell by writing 5 to
 * /proc/<pid>/clear_refs. Children still running at the cell's end are not counted; a peak that
 * could not be reset counts only when the cell raised it.
 */
export class ProcMeter implements UsageMeter {
  readonly #pid: () => number | undefined;
  #files: ProcFiles | undefined;
  #cpuAtBegin: number | undefined;
  #peakAtBegin: number | undefined;
  #reset = false;
  #maxPeak: number | undefined;

  constructor(pid: () => number | undefined) {
    this.#pid = pid;
  }

  #proc(): ProcFiles | undefined {
    const pid = this.#pid();
    if (pid === undefined) return undefined;
    if (this.#files?.pid !== pid) {
      this.#files?.close();
      this.#files = new ProcFiles(pid);
    }
    return this.#files;
  }

  begin(): void {
    const proc = this.#proc();
    if (!proc) return;
    this.#cpuAtBegin = statCpuMs(proc.stat.read());
    this.#reset = proc.clearRefs.write("5");
    this.#peakAtBegin = this.#reset ? undefined : statusBytes(proc.status.read(), "VmHWM");
  }

  end(): CellUsage {
    const proc = this.#proc();
    if (!proc) return { cpuMs: null, peakRssBytes: null };
    const cpu = statCpuMs(proc.stat.read());
    const peak = statusBytes(proc.status.read(), "VmHWM");
    const cellPeak = peak === undefined ? undefined : this.#reset || (this.#peakAtBegin !== undefined && peak > this.#peakAtBegin) ? peak : undefined;
    if (peak !== undefined) this.#maxPeak = Math.max(this.#maxPeak ?? 0, peak);
    return { cpuMs: cpu === undefined || this.#cpuAtBegin === undefined ? null : cpu - this.#cpuAtBegin, peakRssBytes: orNull(cellPeak) };
  }

  totals(): CellUsage {
    const proc = this.#proc();
    const peak = statusBytes(proc?.status.read(), "VmHWM");
    if (peak !== undefined) this.#maxPeak = Math.max(this.#maxPeak ?? 0, peak);
    return { cpuMs: orNull(statCpuMs(proc?.stat.read())), peakRssBytes: orNull(this.#maxPeak) };
  }

  close(): void {
    this.#files?.close();
    this.#files = undefined;
  }
}
