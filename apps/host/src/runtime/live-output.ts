// C16 live output inside the host: a cell's output messages go from its workbench to the clients
// that asked for that execution or that session, and nowhere else. Nothing here is stored: the
// durable log and every model request hold the completion record only (C7).

/**
 * One `output` message as the host forwards it to control clients (never stored). Defined here,
 * where it is published: the CLI renders it, and a runtime module importing the CLI made an
 * import cycle through the CLI's renderer back to host.ts.
 */
export interface LiveOutputEvent {
  type: "output";
  session_id: string;
  execution_id: string;
  seq: number;
  stream: "stdout" | "stderr";
  text: string;
  dropped_bytes: number;
}

/** Which live output a client wants: one execution's, one session's, or (neither given) every cell's. */
export interface OutputFilter {
  executionId?: string;
  sessionId?: string;
}

type Watcher = { filter: OutputFilter; listener: (event: LiveOutputEvent) => void };

/** The host's live output fan-out: publish once, delivered to each matching watcher. */
export class LiveOutputHub {
  private readonly watchers = new Set<Watcher>();

  /** Deliver `listener` every event matching `filter` until the returned function is called. */
  watch(filter: OutputFilter, listener: (event: LiveOutputEvent) => void): () => void {
    const watcher = { filter, listener };
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** Whether anyone watches: a host with no watcher does no work per message. */
  get watched(): boolean {
    return this.watchers.size > 0;
  }

  /** Hand one event to every matching watcher; a watcher that throws is dropped, the others still get it. */
  publish(event: LiveOutputEvent): void {
    for (const watcher of [...this.watchers]) {
      const { executionId, sessionId } = watcher.filter;
      if (executionId !== undefined && executionId !== event.execution_id) continue;
      if (sessionId !== undefined && sessionId !== event.session_id) continue;
      try {
        watcher.listener(event);
      } catch {
        this.watchers.delete(watcher);
      }
    }
  }
}
