// Live output (C16) for one control connection: the watches it asked for, written to its socket
// without ever queueing more than MAX_LIVE_BACKLOG_BYTES for a client that does not read.
import type { Socket } from "node:net";
import type { LiveDisplayEvent, LiveOutputEvent, LiveOutputHub, OutputFilter } from "../runtime/live-output";
import { MAX_LIVE_BACKLOG_BYTES } from "./protocol";

/** One connection's live output watches. */
export class ConnectionLiveOutput {
  private readonly stops = new Set<() => void>();
  /**
   * Per execution, what this client missed because it did not read: the last missed event with no
   * text and, as dropped_bytes, every byte of the missed ones. It is owed to the client: merged
   * into the execution's next event it gets, or sent as it is once the socket drained (the cell may
   * print nothing more), or before an exec's reply. Its seq is the last missed one, so the client
   * sees seq rise past the gap and is told in bytes what the gap held.
   */
  private readonly owed = new Map<string, LiveOutputEvent>();
  /** Whether a flush waits for the socket's next drain. */
  private flushing = false;

  constructor(
    private readonly hub: LiveOutputHub | undefined,
    private readonly socket: Socket,
    private readonly send: (frame: { event: LiveOutputEvent | LiveDisplayEvent }) => void,
  ) {}

  /** Whether this host streams live output at all. */
  get available(): boolean {
    return this.hub !== undefined;
  }

  /** Push matching events to this connection until the returned function (or close) stops it. */
  watch(filter: OutputFilter): () => void {
    if (!this.hub) return () => undefined;
    const unwatch = this.hub.watch(
      filter,
      (event) => this.deliver(event),
      (event) => this.deliverDisplay(event),
    );
    const stop = () => {
      unwatch();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return stop;
  }

  /** An exec's cell ended (its reply goes next): what the client missed of it is said now, before the reply. */
  settle(executionId: string): void {
    const owed = this.owed.get(executionId);
    if (!owed) return;
    this.owed.delete(executionId);
    this.send({ event: owed });
  }

  /** The connection closed: stop every watch. */
  close(): void {
    for (const stop of [...this.stops]) stop();
    this.owed.clear();
  }

  private deliver(event: LiveOutputEvent): void {
    if (this.socket.destroyed) return;
    const owed = this.owed.get(event.execution_id);
    if (this.socket.writableLength > MAX_LIVE_BACKLOG_BYTES) {
      if (!this.flushing) {
        this.flushing = true;
        this.socket.once("drain", () => this.flush());
      }
      const missed = (owed?.dropped_bytes ?? 0) + Buffer.byteLength(event.text) + event.dropped_bytes;
      this.owed.set(event.execution_id, { ...event, text: "", dropped_bytes: missed });
      return;
    }
    if (owed) this.owed.delete(event.execution_id);
    this.send({ event: owed ? { ...event, dropped_bytes: event.dropped_bytes + owed.dropped_bytes } : event });
  }

  /**
   * A stored display (C20): sent unless the client is that far behind, when it is dropped like
   * output (the execution's record lists it; its reply has every display).
   */
  private deliverDisplay(event: LiveDisplayEvent): void {
    if (this.socket.destroyed || this.socket.writableLength > MAX_LIVE_BACKLOG_BYTES) return;
    this.send({ event });
  }

  /** The client read everything queued: tell it what it missed meanwhile. */
  private flush(): void {
    this.flushing = false;
    if (this.socket.destroyed) return;
    const owed = [...this.owed.values()];
    this.owed.clear();
    for (const event of owed) this.send({ event });
  }
}
