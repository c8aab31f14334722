import type { WorkerGroup } from "./group.js";
import { markGroup, type GroupMark } from "./group.js";
import { cpuVerdict, limitVerdict, type ExitSeen, type LimitVerdict } from "./verdict.js";
import { watchCpu } from "./cpu-watch.js";
import { withGuardLimits } from "./guard-args.js";
import { LimitsUnavailableError, type LimitsMechanism } from "./mechanism.js";
import { TreeMeter } from "./tree-meter.js";
import { GroupMeter, type CellUsage, type UsageMeter } from "./usage.js";

const NO_USAGE: CellUsage = { cpuMs: null, peakRssBytes: null };

/**
 * The limits and accounting of one worker generation, in the few calls the supervisor's start
 * path makes: its group (made before the spawn), the guard's argv, the CPU watch once it runs,
 * each cell's cost, the verdict when it dies, and the group's removal once its tree is gone.
 */
export class WorkerLimits {
  readonly mechanism: LimitsMechanism | undefined;
  readonly group: WorkerGroup | undefined;
  #meter: UsageMeter | undefined;
  #mark: GroupMark | undefined;
  #stopWatch: () => void = () => undefined;
  #over: LimitVerdict | undefined;

  /** Make the generation's group. Throws {@link LimitsUnavailableError} when the mechanism cannot. */
  constructor(mechanism: LimitsMechanism | undefined, name: string) {
    this.mechanism = mechanism;
    this.group = mechanism?.createGroup(name);
    if (this.group) this.#mark = markGroup(this.group, mechanism!.limits);
  }

  /** The guard's argv with what it must apply before the command runs. */
  guardArgv(guard: [string, ...string[]]): [string, ...string[]] {
    return this.mechanism ? (withGuardLimits(guard, this.mechanism.guardLimits(this.group)) as [string, ...string[]]) : guard;
  }

  /**
   * The worker runs: measure its cells (the group, else the tree below `root`, the guard, read
   * from /proc; a worker on another machine is not measured) and watch the group's CPU time,
   * `onOver` ending the tree at the cpu limit.
   */
  running(pid: () => number | undefined, root: () => number | undefined, remote: boolean, onOver: (verdict: LimitVerdict) => void): void {
    this.#meter = this.group ? new GroupMeter(this.group) : remote ? undefined : new TreeMeter(root, pid);
    const group = this.group;
    const cpuMs = this.mechanism?.limits.cpuMs;
    if (!group || cpuMs === undefined) return;
    this.#stopWatch = watchCpu(() => group.cpuMs(), cpuMs, (used) => {
      this.#over = cpuVerdict(this.mechanism!.limits, used, this.mechanism!.kind);
      onOver(this.#over);
    });
  }

  /**
   * A cell is about to be sent: the OOM and fork counters its verdict compares against, and its
   * usage (the CPU reading, the worker's peak reset), all read before the worker can run it. Read
   * after the send, on a busy machine the worker could run the cell before the host ran again: a
   * bomb the kernel ended was already in the mark (reported as a plain exit, not the limit), and
   * the peak reset erased the peak the cell had just made.
   */
  cellBegin(): void {
    if (this.group) this.#mark = markGroup(this.group, this.mechanism!.limits);
    try {
      this.#meter?.begin();
    } catch {
      // a reading that fails leaves the cell's cost null
    }
  }

  cellEnd(): CellUsage {
    try {
      return this.#meter?.end() ?? NO_USAGE;
    } catch {
      return NO_USAGE;
    }
  }

  /** The generation's totals so far (runtime.inspect). */
  totals(): CellUsage {
    return this.#meter?.totals() ?? NO_USAGE;
  }

  /** The limit that ended the worker, read from the mechanism (call before {@link release}). */
  verdict(exit: ExitSeen): LimitVerdict | undefined {
    if (this.#over) return this.#over;
    if (!this.mechanism) return undefined;
    return limitVerdict(this.mechanism.kind, this.mechanism.limits, this.group, this.#mark, exit);
  }

  /** Stop watching; kill what is left in the group and remove it. */
  async release(): Promise<void> {
    this.#stopWatch();
    this.#meter?.close();
    await this.group?.remove();
  }
}

export { LimitsUnavailableError };
