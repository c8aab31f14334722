import { aloneChain, losesChildren, treeTicks, TreeReader, type ProcCounters, type TreeReading } from "./proc-tree.js";
import { ControlFile } from "./cgroup-files.js";
import { statusBytes, type CellUsage, type UsageMeter } from "./usage.js";

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;
const ticksToMs = (ticks: number) => Math.round((ticks * 1000) / TICKS_PER_SECOND);

/** Whether `b` and `e` both show the worker alone, and nothing of the tree was reaped in between. */
function aloneThroughout(b: TreeReading, e: TreeReading, worker: number): boolean {
  const before = aloneChain(b, worker);
  const after = aloneChain(e, worker);
  if (!before || !after || before.length !== after.length || losesChildren(b) || losesChildren(e)) return false;
  if (!sameReaps(b.root, e.root)) return false;
  return before.every((pid, i) => pid === after[i] && sameReaps(b.procs.get(pid)!, e.procs.get(pid)!));
}

/** The same process, and it reaped nothing between the two readings (a reaped child always leaves faults). */
function sameReaps(b: ProcCounters, e: ProcCounters): boolean {
  return b.start === e.start && b.reapedFaults === e.reapedFaults && b.reapedTicks === e.reapedTicks;
}

/**
 * The worker's own peak resident set (VmHWM), reset at each cell by writing 5 to clear_refs; a
 * peak that could not be reset counts only when the cell raised it.
 */
class WorkerPeak {
  #pid: number | undefined;
  #status: ControlFile | undefined;
  #clearRefs: ControlFile | undefined;
  #atBegin: number | undefined;
  #reset = false;
  #max: number | undefined;

  #files(pid: number | undefined): { status: ControlFile; clearRefs: ControlFile } | undefined {
    if (pid === undefined) return undefined;
    if (pid !== this.#pid || !this.#status || !this.#clearRefs) {
      this.close();
      this.#pid = pid;
      this.#status = new ControlFile(`/proc/${pid}/status`);
      this.#clearRefs = new ControlFile(`/proc/${pid}/clear_refs`);
    }
    return { status: this.#status, clearRefs: this.#clearRefs };
  }

  begin(pid: number | undefined): void {
    const files = this.#files(pid);
    this.#reset = files?.clearRefs.write("5") ?? false;
    this.#atBegin = files && !this.#reset ? statusBytes(files.status.read(), "VmHWM") : undefined;
  }

  /** The cell's peak (null when unknown), and the generation's highest so far. */
  end(pid: number | undefined): number | null {
    const peak = this.now(pid);
    const raised = peak !== undefined && (this.#reset || (this.#atBegin !== undefined && peak > this.#atBegin));
    return raised ? peak : null;
  }

  /** The peak now, kept as the generation's highest. */
  now(pid: number | undefined): number | undefined {
    const peak = statusBytes(this.#files(pid)?.status.read(), "VmHWM");
    if (peak !== undefined) this.#max = Math.max(this.#max ?? 0, peak);
    return peak;
  }

  get max(): number | null {
    return this.#max ?? null;
  }

  close(): void {
    this.#status?.close();
    this.#clearRefs?.close();
    this.#status = this.#clearRefs = undefined;
  }
}

/**
 * Without a cgroup: the worker's tree, read below its guard (the tree's child subreaper, so every
 * process the worker started, orphans too, is below it or was reaped by one of the tree).
 * - CPU time: the tree's, every process below the guard and what each reaped (the guard's
 *   orphans too); null when a process of the tree has SIGCHLD ignored (its children leave no
 *   counter) or a reading failed.
 * - Peak resident set: the worker's own (VmHWM, reset per cell), and only when the tree was the
 *   worker alone for the whole cell: no other process at either end, none reaped in between.
 *   Otherwise null: per-process peaks do not add up to the tree's peak, and a child that came and
 *   went is gone from /proc (C17: never the worker alone reported as the tree).
 */
export class TreeMeter implements UsageMeter {
  readonly #root: () => number | undefined;
  readonly #worker: () => number | undefined;
  readonly #peak = new WorkerPeak();
  readonly #reader = new TreeReader();
  #atBegin: TreeReading | undefined;
  /** The first reading: the generation's tree is the worker alone while nothing differs from it. */
  #baseline: TreeReading | undefined;
  /** A reading found more than the worker: the generation's peak is not the worker's any more. */
  #shared = false;

  constructor(root: () => number | undefined, worker: () => number | undefined) {
    this.#root = root;
    this.#worker = worker;
  }

  #read(): TreeReading | undefined {
    const root = this.#root();
    const reading = root === undefined ? undefined : this.#reader.read(root);
    this.#baseline ??= reading;
    return reading;
  }

  /** Whether the tree was the worker alone from `b` to `e` (and remember when it was not). */
  #alone(b: TreeReading | undefined, e: TreeReading | undefined): boolean {
    const worker = this.#worker();
    const alone = b !== undefined && e !== undefined && worker !== undefined && aloneThroughout(b, e, worker);
    if (!alone) this.#shared = true;
    return alone;
  }

  begin(): void {
    this.#peak.begin(this.#worker());
    this.#atBegin = this.#read();
  }

  end(): CellUsage {
    const end = this.#read();
    const peak = this.#peak.end(this.#worker());
    const begin = this.#atBegin;
    this.#atBegin = undefined;
    const alone = this.#alone(begin, end);
    let cpuMs: number | null = null;
    if (begin && end && !losesChildren(begin) && !losesChildren(end)) {
      const ticks = treeTicks(end) - treeTicks(begin);
      cpuMs = ticks >= 0 ? ticksToMs(ticks) : null;
    }
    return { cpuMs, peakRssBytes: alone ? peak : null };
  }

  totals(): CellUsage {
    const now = this.#read();
    this.#peak.now(this.#worker());
    const alone = this.#alone(this.#baseline, now);
    return { cpuMs: now && !losesChildren(now) ? ticksToMs(treeTicks(now)) : null, peakRssBytes: alone && !this.#shared ? this.#peak.max : null };
  }

  close(): void {
    this.#peak.close();
    this.#reader.close();
  }
}
