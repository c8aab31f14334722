import type { InboundMessage } from "./wire.js";

/** The kind of a message a worker may send. */
export type InboundKind = InboundMessage["kind"];

/** The message of one kind. */
export type InboundOf<K extends InboundKind> = Extract<InboundMessage, { kind: K }>;

/**
 * What the host does with each kind of message a running worker sends: one entry per kind. A kind
 * without an entry (hello after the handshake, anything only the host sends) is a protocol violation.
 */
export type InboundRoutes = { [K in InboundKind]?: (message: InboundOf<K>) => void };

/**
 * The frame loop's dispatch: hand `message` to its kind's route, or report the kind as unexpected.
 * A new message kind the worker sends is one more entry in the routes, nothing else.
 */
export function dispatchInbound(message: InboundMessage, routes: InboundRoutes, unexpected: (kind: string) => void): void {
  const route = Object.hasOwn(routes, message.kind) ? (routes[message.kind] as ((message: InboundMessage) => void) | undefined) : undefined;
  if (route) route(message);
  else unexpected(message.kind);
}
