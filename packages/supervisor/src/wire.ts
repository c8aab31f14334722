import { encodeFrame } from "@klbr/frame";
import {
  MAX_REQUESTS_PER_CELL,
  makeEnvelope,
  parseEnvelope,
  parseHookResult,
  parseHostRequest,
  type CellResult,
  type CompletedResult,
  type ExecuteMessage,
  type HelloMessage,
  type HookInputOf,
  type HookResultOf,
  type HookSlot,
  type HostReply,
  type HostReplyMessage,
  type HostRequest,
  type InterruptMessage,
  type InvokeMessage,
  type Message,
  type ShutdownMessage,
} from "@klbr/envelope";

export type { CellResult, CompletedResult, HelloMessage, HookSlot, HostRequest };
export { MAX_REQUESTS_PER_CELL, parseHookResult, parseHostRequest };

/** The typed decision a hook slot returned, as @klbr/envelope validates it. */
export type HookValue<S extends HookSlot = HookSlot> = HookResultOf<S>;

/** The typed input of a hook slot (C6). */
export type HookInput<S extends HookSlot = HookSlot> = HookInputOf<S>;

/** Session identity every envelope on one connection carries. */
export interface Identity {
  sessionId: string;
  generation: string;
}

/** Reply the host sends for one host request. */
export type HostReplyBody = HostReply;

/** Messages the host sends. */
export type OutboundMessage = ExecuteMessage | InvokeMessage | HostReplyMessage | InterruptMessage | ShutdownMessage;

/** Any message a valid envelope carries; the host acts on hello, host_request and completed. */
export type InboundMessage = Message;

/** Validate one decoded frame value as an envelope of this connection and return its message. */
export function readMessage(value: unknown, ids: Identity): InboundMessage {
  return parseEnvelope(value, { sessionId: ids.sessionId, generation: ids.generation }).message;
}

/** Encode one outbound message in this connection's envelope (both validate before writing). */
export function writeMessage(ids: Identity, message: OutboundMessage): Uint8Array {
  return encodeFrame(makeEnvelope(ids.sessionId, ids.generation, message));
}

/** The stable `code` of a frame or envelope error, or undefined for anything else. */
export function errorCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && typeof (err as { code?: unknown }).code === "string") {
    return (err as { code: string }).code;
  }
  return undefined;
}
