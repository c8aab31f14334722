import { availableParallelism } from "node:os";

/**
 * At most `limit` workbench starts at once; the rest wait their turn in arrival order.
 *
 * A start is a Python interpreter importing the runtime: CPU-bound for ~100 ms. Hundreds of
 * sessions whose first cells arrive together (a fleet of agents, a host restart) would otherwise
 * spawn hundreds of interpreters at once on a few cores: every one of them slows down, all of them
 * together use more memory, and past the supervisor's handshake timeout (10 s) they fail. Queued
 * here, each start gets a core, and its handshake timeout counts only from its own spawn.
 */
export class StartGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** The most starts that ran at once (a test asserts the bound held). */
  peak = 0;

  constructor(readonly limit: number = defaultStartConcurrency()) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`start concurrency must be a positive integer, got ${limit}`);
  }

  /** Starts waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Run `start` when a turn is free; the turn is given back however it ends. */
  async run<T>(start: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await start();
    } finally {
      const next = this.waiting.shift();
      // The turn passes straight to the next waiter: `running` stays as it is.
      if (next) next();
      else this.running -= 1;
    }
  }
}

/** Two starts per core: a start also waits on the disk and the handshake, not only on a core. */
export function defaultStartConcurrency(): number {
  return Math.max(2, 2 * availableParallelism());
}
