import type { Server, Socket } from "node:net";
import { Channel } from "./channel.js";
import { SupervisorError } from "./errors.js";
import type { Handshake } from "./handshake.js";
import { dispatchInbound, type InboundRoutes } from "./inbound.js";
import type { Identity, InboundMessage } from "./wire.js";

/** How long a worker that closed its connection before hello has to exit (then WORKER_EXITED_EARLY). */
const EOF_EXIT_GRACE_MS = 2000;

/** What the frame loop needs from its worker. */
export interface FrameLoopScope {
  /** What every envelope of the connection names (read per frame: a spare's changes at bind). */
  readonly identity: Identity;
  /** Pending until the first message was accepted as the hello. */
  readonly handshake: Handshake;
  /** The messages after the hello, by kind (routes.ts). */
  readonly routes: InboundRoutes;
  /** The worker is starting: its one connection may still come. */
  starting(): boolean;
  /** Messages after the hello are read: the worker runs, or a graceful shutdown lets it finish. */
  reading(): boolean;
  /** A graceful shutdown is under way: the worker's EOF is the end it was asked for. */
  shuttingDown(): boolean;
  /** The first message while the handshake is pending (it accepts or fails the handshake). */
  hello(message: InboundMessage): void;
  invalidate(reason: string, detail: string): void;
}

/**
 * A worker's one connection and its frame loop: accepts the connection on the private socket,
 * hands the first message to the handshake and every later one to its kind's route, and turns a
 * broken connection into a failed handshake or an invalidated generation.
 */
export class FrameLoop {
  readonly #scope: FrameLoopScope;
  #channel: Channel | undefined;

  constructor(scope: FrameLoopScope) {
    this.#scope = scope;
  }

  /** The connection, once the worker made it. */
  get channel(): Channel | undefined {
    return this.#channel;
  }

  /** Take the worker's connection from `server`, which is closed once it came. */
  listen(server: Server): void {
    server.on("connection", (socket) => this.#accept(server, socket));
    // An accept failure (EMFILE...) is emitted on the server: without a listener it would throw
    // in the host. It fails the handshake; once the hello is in, the server is closed anyway.
    server.on("error", (err) => {
      this.#scope.handshake.fail(new SupervisorError("WORKER_PROTOCOL", `the worker's listening socket failed: ${err.message}`, { cause: err }));
    });
  }

  /** Stop reading and drop the connection. */
  close(): void {
    this.#channel?.close();
  }

  #accept(server: Server, socket: Socket): void {
    if (this.#channel || !this.#scope.starting()) {
      socket.destroy();
      return;
    }
    server.close();
    this.#channel = new Channel(socket, this.#scope.identity, {
      message: (message) => this.#onMessage(message),
      fault: (reason, detail) => this.#onFault(reason, detail),
    });
  }

  #onMessage(message: InboundMessage): void {
    const scope = this.#scope;
    if (scope.handshake.pending) {
      scope.hello(message);
      return;
    }
    if (!scope.reading() || this.#channel?.closed) return;
    dispatchInbound(message, scope.routes, (kind) => scope.invalidate("protocol_violation", `the worker sent a ${JSON.stringify(kind)} message`));
  }

  #onFault(reason: string, detail: string): void {
    const scope = this.#scope;
    if (scope.handshake.pending) {
      const err = new SupervisorError("WORKER_PROTOCOL", `handshake failed (${reason}): ${detail}`);
      // A worker that dies while connecting closes the socket first and may take a while to
      // exit: let its exit name the failure, unless it outlives the connection by the grace.
      if (reason === "worker_exited") setTimeout(() => scope.handshake.fail(err), EOF_EXIT_GRACE_MS);
      else scope.handshake.fail(err);
      return;
    }
    if (scope.shuttingDown() && reason === "worker_exited") return;
    scope.invalidate(reason, detail);
  }
}
