/**
 * One execution's output and displays, in the worker's order (C16, C20). A display is stored
 * before it is published (a watcher told of it can fetch its blobs), and storing is an async store
 * write; output that arrives meanwhile must not overtake it, on the wire or in the record. So every
 * step of an execution goes through one chain: a step runs at once when none is pending (output
 * with no display being stored costs no promise, as before), otherwise after the ones before it.
 */
export class CellOrder {
  private tail: Promise<void> | null = null;

  /** Run `step` after every step given before it. A step does not throw; an async one's rejection is its own to handle. */
  run(step: () => void | Promise<void>): void {
    if (this.tail === null) {
      const result = step();
      if (result instanceof Promise) this.follow(result);
      return;
    }
    this.follow(this.tail.then(step));
  }

  /** Resolves once no step is pending, those given while it waited included (the cell's end waits for it: nothing of the cell after its end). */
  async settled(): Promise<void> {
    while (this.tail !== null) await this.tail;
  }

  private follow(step: Promise<void>): void {
    const tail = step.catch(() => undefined);
    this.tail = tail;
    // Idle again once the last step given ran: the next one runs at once.
    void tail.then(() => {
      if (this.tail === tail) this.tail = null;
    });
  }
}
