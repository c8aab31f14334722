import { startSpare, type SpareOptions, type SpareWorker } from "@klbr/supervisor";
import type { SkillIndex } from "@klbr/skills";
import type { StartGate } from "./start-gate";

/** What the spare pool uses of the host. */
export interface SparesDeps {
  /** How many spares to keep (0: none). */
  count: number;
  /** Whether the host is stopping: no spare starts then. */
  stopping(): boolean;
  /** Index the skill roots now (the set a spare installs). */
  reindex(): Promise<SkillIndex>;
  /** The worker options of a workbench on `index`, as a cold start would use them. */
  options(index: SkillIndex): SpareOptions;
  /** What makes a spare current besides its skills: the runtime it imported, the sandbox, the worker flags. */
  fingerprint(): string;
  /** Where spare starts queue with the cold starts (a spare never jumps that queue). */
  gate?: StartGate;
  /** A spare could not be started (the pool retries at the next take). */
  onError(error: Error): void;
  /** How long a replacement waits at most for the taker's first cell to end (default {@link REFILL_DELAY_MS}). */
  refillDelayMs?: number;
}

/**
 * The longest a replacement spare waits, after a take, for the session that took the spare to go
 * quiet (see {@link SparePool.take}): a start costs a core for ~100 ms, which on a small machine is
 * the first cell's own time otherwise.
 */
export const REFILL_DELAY_MS = 250;

interface Spare {
  worker: SpareWorker;
  /** The skill set revision it installed and the fingerprint it was started with. */
  skills: string;
  fingerprint: string;
}

/**
 * The warm spares (C19): workbenches started and waiting, with the current skill set, taken by the
 * next session (or restart) that needs a workbench; a new one starts behind each one taken. A spare
 * whose skill set or fingerprint is no longer current is discarded and replaced, never handed out.
 */
export class SparePool {
  private readonly ready: Spare[] = [];
  private starting = 0;
  private filling: Promise<void> | null = null;
  private stopped = false;
  /** A replacement waits for a quiet moment (see take): its timer, cleared once it started. */
  private refill: NodeJS.Timeout | null = null;
  /** Spares handed out, and spares discarded (stale or dead) instead, since the host started. */
  taken = 0;
  discarded = 0;

  constructor(private readonly deps: SparesDeps) {}

  /** How many spares are kept. */
  get target(): number {
    return this.deps.count;
  }

  /** Spares started and not taken. */
  get available(): number {
    return this.ready.filter((s) => s.worker.available).length;
  }

  /** The pids of the spares started and not taken. */
  get pids(): number[] {
    return this.ready.filter((s) => s.worker.available).map((s) => s.worker.pid);
  }

  /** Start spares until `count` are up (one at a time: each start costs a core for ~100 ms). */
  fill(): Promise<void> {
    if (this.deps.count <= 0 || this.stopped) return Promise.resolve();
    this.filling ??= this.fillLoop().finally(() => (this.filling = null));
    return this.filling;
  }

  private async fillLoop(): Promise<void> {
    while (!this.stopped && !this.deps.stopping() && this.available + this.starting < this.deps.count) {
      this.starting += 1;
      try {
        const index = await this.deps.reindex();
        const fingerprint = this.deps.fingerprint();
        const options = this.deps.options(index);
        // Checked again once the gate gives the turn: a stop that came meanwhile starts nothing.
        const start = () => (this.stopped || this.deps.stopping() ? Promise.resolve(null) : startSpare(options));
        const worker = await (this.deps.gate ? this.deps.gate.run(start) : start());
        if (worker === null) return;
        if (this.stopped || this.deps.stopping()) {
          await worker.discard();
          return;
        }
        this.ready.push({ worker, skills: index.revision, fingerprint });
      } catch (error) {
        this.deps.onError(error as Error);
        return;
      } finally {
        this.starting -= 1;
      }
    }
  }

  /**
   * A current spare for a generation on `index`, or null when none is ready. Spares that died or
   * are no longer current are discarded on the way; a replacement starts behind whatever left,
   * once `quiet` settles (the taker's first cell ended) or {@link REFILL_DELAY_MS} passed, so
   * that the new spare's start (a Python interpreter importing the runtime) does not compete for
   * the CPU with the bind and the first cell it was kept warm for.
   */
  take(index: SkillIndex, quiet?: Promise<unknown>): SpareWorker | null {
    const fingerprint = this.deps.fingerprint();
    let found: SpareWorker | null = null;
    while (this.ready.length > 0 && found === null) {
      const spare = this.ready.shift()!;
      if (spare.worker.available && spare.skills === index.revision && spare.fingerprint === fingerprint) found = spare.worker;
      else {
        this.discarded += 1;
        void spare.worker.discard();
      }
    }
    if (found) this.taken += 1;
    this.fillWhenQuiet(quiet);
    return found;
  }

  /**
   * A spare taken for the last skill index that will not run its generation after all (the roots,
   * indexed again, have another revision, or could not be indexed; Workbenches.bindEarly): counted
   * as discarded, not as handed out.
   */
  takenUnused(): void {
    this.taken -= 1;
    this.discarded += 1;
  }

  /** Fill once `quiet` settles or the refill delay passed, whichever comes first (at most one wait at a time). */
  private fillWhenQuiet(quiet: Promise<unknown> | undefined): void {
    if (this.deps.count <= 0 || this.stopped || this.refill !== null) return;
    const start = () => {
      if (this.refill === null) return;
      clearTimeout(this.refill);
      this.refill = null;
      void this.fill();
    };
    // Not kept alive by the timer: a host that stops meanwhile exits (stop() clears it anyway).
    this.refill = setTimeout(start, this.deps.refillDelayMs ?? REFILL_DELAY_MS).unref();
    void quiet?.then(start, start);
  }

  /** Discard every spare; none starts again. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refill !== null) clearTimeout(this.refill);
    this.refill = null;
    await this.filling?.catch(() => undefined);
    const all = this.ready.splice(0);
    await Promise.allSettled(all.map((s) => s.worker.discard()));
  }
}
