// Live output (C16) for one control connection: the watches it asked for, written to its socket
// without ever queueing more than MAX_LIVE_BACKLOG_BYTES for a client that does not read.
import type { Socket } from "node:net";
import type { LiveOutputEvent } from "../cli/live-output";
import type { LiveOutputHub, OutputFilter } from "../runtime/live-output";
import { MAX_LIVE_BACKLOG_BYTES } from "./protocol";

/** One connection's live output watches. */
export class ConnectionLiveOutput {
  private readonly stops = new Set<() => void>();
  /** Bytes this client missed because it did not read, reported in the next event it gets. */
  private missed = 0;

  constructor(
    private readonly hub: LiveOutputHub | undefined,
    private readonly socket: Socket,
    private readonly send: (frame: { event: LiveOutputEvent }) => void,
  ) {}

  /** Whether this host streams live output at all. */
  get available(): boolean {
    return this.hub !== undefined;
  }

  /** Push matching events to this connection until the returned function (or close) stops it. */
  watch(filter: OutputFilter): () => void {
    if (!this.hub) return () => undefined;
    const unwatch = this.hub.watch(filter, (event) => this.deliver(event));
    const stop = () => {
      unwatch();
      this.stops.delete(stop);
    };
    this.stops.add(stop);
    return stop;
  }

  /** The connection closed: stop every watch. */
  close(): void {
    for (const stop of [...this.stops]) stop();
  }

  private deliver(event: LiveOutputEvent): void {
    if (this.socket.destroyed) return;
    if (this.socket.writableLength > MAX_LIVE_BACKLOG_BYTES) {
      this.missed += Buffer.byteLength(event.text) + event.dropped_bytes;
      return;
    }
    const dropped = event.dropped_bytes + this.missed;
    this.missed = 0;
    this.send({ event: dropped === event.dropped_bytes ? event : { ...event, dropped_bytes: dropped } });
  }
}
