import { createConnection, type Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@klbr/frame";
import { HostError } from "../errors";
import type { ControlMessage, ControlRequest } from "./protocol";

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
type Op = ControlRequest extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;

/** A connection to a running daemon's control socket. */
export class ControlClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly decoder = new FrameDecoder();
  /** Who hears pushed events: subscribers, live output watches, a live exec (each filters its own). */
  private readonly listeners = new Set<(event: unknown) => void>();
  /** Why the connection is no longer usable, once it is not. */
  private broken: HostError | null = null;
  /** Settles when the daemon or this client closed the connection. */
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("data", (chunk) => {
      let messages: unknown[];
      try {
        messages = this.decoder.push(chunk);
      } catch (error) {
        this.fail(new HostError("CONTROL_PROTOCOL", `bad frame from the daemon: ${(error as Error).message}`));
        socket.destroy();
        return;
      }
      for (const m of messages as ControlMessage[]) {
        if ("event" in m) {
          for (const listener of [...this.listeners]) listener(m.event);
          continue;
        }
        const waiter = m.id === null ? undefined : this.pending.get(m.id);
        if (!waiter) continue;
        this.pending.delete(m.id!);
        if (m.ok) waiter.resolve(m.value);
        else waiter.reject(new HostError(m.error.code, m.error.message));
      }
    });
    socket.on("close", () => this.fail(new HostError("HOST_NOT_RUNNING", "the daemon closed the control connection")));
    socket.on("error", () => undefined);
  }

  /** Connect, or fail with HOST_NOT_RUNNING when nothing answers. */
  static connect(path: string): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      socket.once("connect", () => resolve(new ControlClient(socket)));
      socket.once("error", (error) => reject(new HostError("HOST_NOT_RUNNING", `no klbr daemon answers on ${path} (${(error as NodeJS.ErrnoException).code})`)));
    });
  }

  /** Send one request and wait for its reply. */
  request(op: Op): Promise<unknown> {
    // A closed socket swallows writes: without this the caller would wait for a reply forever.
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const frame = encodeFrame({ ...op, id });
      this.pending.set(id, { resolve, reject });
      this.socket.write(frame);
    });
  }

  /** Receive the daemon's notifications. */
  async subscribe(onEvent: (event: unknown) => void): Promise<void> {
    this.listen(onEvent);
    await this.request({ op: "subscribe" });
  }

  /** Hear every pushed event until the returned function is called (no request is sent). */
  listen(onEvent: (event: unknown) => void): () => void {
    this.listeners.add(onEvent);
    return () => void this.listeners.delete(onEvent);
  }

  /**
   * Receive live output (C16) of one execution or one session's cells; resolves with whether the
   * daemon streams it at all (`klbr serve --no-live-output` does not).
   */
  async watchOutput(filter: { execution_id?: string; session?: string }, onEvent: (event: unknown) => void): Promise<boolean> {
    this.listen(onEvent);
    const value = (await this.request({ op: "watch_output", ...filter })) as { live?: boolean } | null;
    return value?.live === true;
  }

  /** Close the connection. */
  close(): void {
    this.broken ??= new HostError("HOST_NOT_RUNNING", "the control connection was closed by this client");
    this.socket.end();
    this.socket.destroy();
  }

  private fail(error: HostError): void {
    this.broken ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}
