/**
 * The operator's stop of one session's running turn (klbr chat's Ctrl-C): what a stop reaches
 * (the route call in flight, the cell the turn runs) and whether one was asked. The turn loop
 * reads `requested` before each request and each call, and clears it when the turn ends.
 */
export class TurnStop {
  /** A stop was asked during the running turn. */
  requested = false;
  private call: AbortController | null = null;
  private cell: string | null = null;

  constructor(private readonly interrupt: (executionId: string) => Promise<unknown>) {}

  /** Stop the turn: abort the route call in flight, and send a running (or queued) cell down the interrupt ladder. */
  ask(): void {
    this.requested = true;
    this.call?.abort();
    if (this.cell !== null) void this.interrupt(this.cell).catch(() => undefined);
  }

  /** A route call a stop aborts, until `finish` is called. */
  callController(): AbortController {
    this.call = new AbortController();
    return this.call;
  }

  /** The route call ended. */
  finishCall(): void {
    this.call = null;
  }

  /** Whether this controller's call was abandoned by a stop (not failed). */
  abandoned(call: AbortController): boolean {
    return this.requested && call.signal.aborted;
  }

  /** Run the turn's cell under `executionId`, named before it starts: a stop from now on reaches it, queued or running. */
  async runCell<T>(executionId: string, run: () => Promise<T>): Promise<T> {
    this.cell = executionId;
    try {
      return await run();
    } finally {
      this.cell = null;
    }
  }

  /** The turn ended: a later stop is for the next turn. */
  clear(): void {
    this.requested = false;
  }
}
