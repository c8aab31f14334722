// C16 live output inside the host: a cell's output messages go from its workbench to the clients
// that asked for that execution or that session, and nowhere else. Nothing here is stored: the
// durable log and every model request hold the completion record only (C7).
import type { OutputListener } from "@klbr/supervisor";
import type { DisplayRef } from "../store/displays";
import type { LiveExecution } from "./live-execution";

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

/**
 * One display of a running cell (C20), pushed to the same watchers in order with its output once
 * it is stored (the DisplayRef's blobs can be fetched at once). `session` is the contract's name
 * (CONTRACTS "Display on the control API"); `session_id` matches the output events'.
 */
export interface LiveDisplayEvent {
  type: "display";
  execution_id: string;
  session: string;
  session_id: string;
  display: DisplayRef;
}

/** Which live output a client wants: one execution's, one session's, or (neither given) every cell's. */
export interface OutputFilter {
  executionId?: string;
  sessionId?: string;
}

type Watcher = { filter: OutputFilter; listener: (event: LiveOutputEvent) => void; onDisplay: ((event: LiveDisplayEvent) => void) | undefined };

/** The execution an output belongs to, as the hub numbers it. */
export type OutputOwner = Pick<LiveExecution, "id" | "sessionId" | "ended">;

/** The host's live output fan-out: publish once, delivered to each matching watcher. */
export class LiveOutputHub {
  private readonly watchers = new Set<Watcher>();
  /**
   * The next seq of each execution's stream as clients see it. A cell's own output and that of the
   * remote cells it calls (each remote operation counts from 0 on its own worker) are one stream
   * under the calling execution, so the host numbers them: 0, 1, 2, ... whichever worker sent
   * them, across remote reconnects. Keyed weakly: an execution that is gone takes its count along.
   */
  private readonly next = new WeakMap<OutputOwner, { seq: number }>();

  /** Deliver `listener` every output event matching `filter` (and `onDisplay` every display event) until the returned function is called. */
  watch(filter: OutputFilter, listener: (event: LiveOutputEvent) => void, onDisplay?: (event: LiveDisplayEvent) => void): () => void {
    const watcher = { filter, listener, onDisplay };
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** Whether anyone watches: a host with no watcher does no work per message. */
  get watched(): boolean {
    return this.watchers.size > 0;
  }

  /**
   * The listener a worker's output for `owner` goes to (its own cell's, or a remote cell it called):
   * each message is published under the execution with the execution's next seq. Output that comes
   * after the execution ended (a remote cell its abandoned task started, still being cancelled) is
   * not its stream any more and is not published: every client sees an execution's output before
   * its completion.
   */
  forExecution(owner: OutputOwner): OutputListener {
    let counter = this.next.get(owner);
    if (!counter) this.next.set(owner, (counter = { seq: 0 }));
    const next = counter;
    return (o) => {
      if (owner.ended) return;
      // Counted even when nobody watches, so a watcher that joins late sees the stream's own numbers.
      const seq = next.seq++;
      if (this.watchers.size > 0) {
        this.publish({ type: "output", session_id: owner.sessionId, execution_id: owner.id, seq, stream: o.stream, text: o.text, dropped_bytes: o.dropped_bytes });
      }
    };
  }

  /** Hand one event to every matching watcher; a watcher that throws is dropped, the others still get it. */
  publish(event: LiveOutputEvent): void {
    this.deliver(event, (watcher) => watcher.listener(event));
  }

  /** Hand one stored display to every matching watcher that asked for displays. */
  publishDisplay(event: LiveDisplayEvent): void {
    this.deliver(event, (watcher) => watcher.onDisplay?.(event));
  }

  private deliver(event: { execution_id: string; session_id: string }, hand: (watcher: Watcher) => void): void {
    for (const watcher of [...this.watchers]) {
      const { executionId, sessionId } = watcher.filter;
      if (executionId !== undefined && executionId !== event.execution_id) continue;
      if (sessionId !== undefined && sessionId !== event.session_id) continue;
      try {
        hand(watcher);
      } catch {
        this.watchers.delete(watcher);
      }
    }
  }
}
