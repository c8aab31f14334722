import type { Socket } from "node:net";
import { FrameDecoder, isFrameError } from "@klbr/frame";
import { errorCode, readMessage, writeExecute, writeInterrupt, writeMessage, type Identity, type InboundMessage, type OutboundMessage } from "./wire.js";

/** What a channel tells its owner. */
export interface ChannelHandlers {
  /** One validated inbound message, in arrival order. */
  message(message: InboundMessage): void;
  /** The connection is unusable: a frame or envelope error, EOF (or a reset), a socket error. Called at most once. */
  fault(reason: string, detail: string): void;
}

/**
 * One framed, enveloped connection to a worker. After the first fault it never reads again: it
 * stops feeding the decoder, drops the socket's listeners and destroys it.
 */
export class Channel {
  readonly #socket: Socket;
  readonly #ids: Identity;
  readonly #decoder = new FrameDecoder();
  #handlers: ChannelHandlers;
  #closed = false;

  constructor(socket: Socket, ids: Identity, handlers: ChannelHandlers) {
    this.#socket = socket;
    this.#ids = ids;
    this.#handlers = handlers;
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    socket.on("end", () => this.#onEnd());
    socket.on("close", () => this.#onEnd());
    socket.on("error", (err: NodeJS.ErrnoException) => {
      // A worker that exits with bytes of ours unread makes the kernel reset our end: that is
      // its end of the connection (an EOF), not a fault of the socket.
      if (err.code === "ECONNRESET" || err.code === "EPIPE") this.#onEnd();
      else this.#fail("socket_error", err.message);
    });
  }

  /** True once the channel has faulted or been closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Encode and write a message; false when the channel is closed (nothing is sent then). */
  send(message: OutboundMessage): boolean {
    if (this.#closed) return false;
    const frame = writeMessage(this.#ids, message);
    this.#socket.write(frame);
    return true;
  }

  /** `send({ kind: "execute", id, code })`, with the execute's own encoder (wire.ts). */
  sendExecute(id: string, code: string): boolean {
    if (this.#closed) return false;
    this.#socket.write(writeExecute(this.#ids, id, code));
    return true;
  }

  /** `send({ kind: "interrupt", id })`, with the interrupt's own encoder (wire.ts). */
  sendInterrupt(id: string): boolean {
    if (this.#closed) return false;
    this.#socket.write(writeInterrupt(this.#ids, id));
    return true;
  }

  /** Stop reading and destroy the connection; no handler is called afterwards. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.removeAllListeners("data");
    this.#socket.on("error", () => undefined);
    this.#socket.destroy();
  }

  #fail(reason: string, detail: string): void {
    if (this.#closed) return;
    this.close();
    this.#handlers.fault(reason, detail);
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    let values: unknown[];
    try {
      values = this.#decoder.push(chunk);
    } catch (err) {
      // The frames this chunk completed before the bad one arrived first: deliver them, so where
      // the socket happened to cut its chunks never decides whether they count.
      if (isFrameError(err)) this.#deliver(err.values);
      this.#fail(`frame_error:${errorCode(err) ?? "UNKNOWN"}`, describe(err));
      return;
    }
    this.#deliver(values);
  }

  #deliver(values: unknown[]): void {
    for (const value of values) {
      if (this.#closed) return;
      let message: InboundMessage;
      try {
        message = readMessage(value, this.#ids);
      } catch (err) {
        this.#fail(`envelope_error:${errorCode(err) ?? "UNKNOWN"}`, describe(err));
        return;
      }
      this.#handlers.message(message);
    }
  }

  #onEnd(): void {
    if (this.#closed) return;
    try {
      this.#decoder.end();
    } catch (err) {
      this.#fail(isFrameError(err) ? `frame_error:${errorCode(err)}` : "frame_error:UNKNOWN", describe(err));
      return;
    }
    this.#fail("worker_exited", "the worker closed its connection");
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
