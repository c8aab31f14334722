/** How an in-cell wait on a peer request ended. */
export type PeerWaitOutcome = "settled" | "timeout" | "aborted";

/**
 * In-cell waits on peer requests: `peer.result` with `wait_ms` parks here, in memory, until the
 * request is answered or cancelled, the time passes, or its cell ends (interrupt included). The
 * durable row stays the truth: a wait only says when to read it again, so a restart that drops
 * every wait (their cells are gone with it) loses nothing.
 */
export class PeerSignals {
  private readonly waiting = new Map<number, Set<(outcome: PeerWaitOutcome) => void>>();

  /**
   * Resolve when request row `id` settles, after `ms`, or when `signal` aborts. Register it in the
   * same tick as the read that found the request pending, so a settle cannot fall in between.
   */
  wait(id: number, ms: number, signal?: AbortSignal): Promise<PeerWaitOutcome> {
    if (signal?.aborted) return Promise.resolve("aborted");
    return new Promise((resolve) => {
      let set = this.waiting.get(id);
      if (!set) this.waiting.set(id, (set = new Set()));
      const done = (outcome: PeerWaitOutcome) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set!.delete(done);
        if (set!.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id);
        resolve(outcome);
      };
      const onAbort = () => done("aborted");
      const timer = setTimeout(() => done("timeout"), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(done);
    });
  }

  /** Wake every wait on request row `id` (it was answered or cancelled). */
  settle(id: number): void {
    for (const done of [...(this.waiting.get(id) ?? [])]) done("settled");
  }

  /** How many waits are parked (a seam for tests). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}
