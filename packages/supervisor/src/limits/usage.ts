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
  const ticks = plainTicks(text) ?? splitTicks(text);
  return Number.isFinite(ticks) ? Math.round((ticks * 1000) / ticksPerSecond) : undefined;
}

// Fields 14-17 of proc(5) (utime, stime, cutime, cstime) are 11-14 after the command name.
const FIRST_TICKS_FIELD = 11;
const TICKS_FIELDS = 4;

/** The four fields summed as `Number`s of the text split at every space (any text). */
function splitTicks(text: string): number {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  let sum = 0;
  for (let i = FIRST_TICKS_FIELD; i < FIRST_TICKS_FIELD + TICKS_FIELDS; i++) sum += Number(fields[i]);
  return sum;
}

/**
 * The same sum read in place when each of the four fields is 1-15 decimal digits followed by a
 * space (every stat the kernel writes), else undefined: the split, its 50 strings and its
 * `Number` calls cost most of reading a stat, twice per cell.
 */
function plainTicks(text: string): number | undefined {
  let at = text.lastIndexOf(")") + 2;
  for (let field = 0; field < FIRST_TICKS_FIELD; field++) {
    const space = text.indexOf(" ", at);
    if (space < 0) return undefined;
    at = space + 1;
  }
  let sum = 0;
  for (let field = 0; field < TICKS_FIELDS; field++) {
    let value = 0;
    const start = at;
    for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(++at)) value = value * 10 + (c - 48);
    if (at === start || at - start > 15 || text.charCodeAt(at) !== 32) return undefined;
    sum += value;
    at++;
  }
  return sum;
}

// Made once: a RegExp per reading was a compile per cell.
const STATUS_LINE = { VmHWM: /^VmHWM:\s+(\d+) kB$/m, VmRSS: /^VmRSS:\s+(\d+) kB$/m } as const;

/** A `kB` line of a `/proc/<pid>/status` text in bytes (VmHWM: the peak resident set). */
export function statusBytes(text: string | undefined, key: "VmHWM" | "VmRSS"): number | undefined {
  if (text === undefined) return undefined;
  const m = STATUS_LINE[key].exec(text);
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
