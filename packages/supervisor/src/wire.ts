import { HEADER_BYTES, MAX_FRAME_BYTES, encodeFrame } from "@klbr/frame";
import {
  MAX_CELL_SOURCE_BYTES,
  MAX_REQUESTS_PER_CELL,
  PROTOCOL_VERSION,
  isIdentifier,
  utf8Length,
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

const utf8 = new TextEncoder();
// A UTF-16 unit of a surrogate pair is not matched (the `u` flag reads code points): only a lone one.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The frame of `execute {id, code}`: the bytes {@link writeMessage} gives, written directly when
 * the schema and the frame encoder certainly accept the message (identifiers, a code of at most
 * MAX_CELL_SOURCE_BYTES UTF-8 bytes with no lone surrogate, a frame within the limit), skipping
 * the validated copy and the encoder's walk on every cell's way out. Anything else takes
 * writeMessage, and throws what it throws.
 */
export function writeExecute(ids: Identity, id: string, code: string): Uint8Array {
  if (
    isIdentifier(ids.sessionId) &&
    isIdentifier(ids.generation) &&
    isIdentifier(id) &&
    typeof code === "string" &&
    code.length <= MAX_CELL_SOURCE_BYTES &&
    (code.length * 3 <= MAX_CELL_SOURCE_BYTES || utf8Length(code) <= MAX_CELL_SOURCE_BYTES) &&
    !LONE_SURROGATE.test(code)
  ) {
    // makeEnvelope's key order (version, session_id, generation, message; kind, id, code), as
    // JSON.stringify writes it; identifiers need no escaping.
    const text =
      `{"version":${PROTOCOL_VERSION},"session_id":"${ids.sessionId}","generation":"${ids.generation}",` +
      `"message":{"kind":"execute","id":"${id}","code":${JSON.stringify(code)}}}`;
    const frame = plainFrame(text);
    if (frame) return frame;
  }
  return writeMessage(ids, { kind: "execute", id, code });
}

/** The frame of `interrupt {id}`, as {@link writeExecute} writes an execute: writeMessage's bytes or its error. */
export function writeInterrupt(ids: Identity, id: string): Uint8Array {
  if (isIdentifier(ids.sessionId) && isIdentifier(ids.generation) && isIdentifier(id)) {
    const frame = plainFrame(
      `{"version":${PROTOCOL_VERSION},"session_id":"${ids.sessionId}","generation":"${ids.generation}","message":{"kind":"interrupt","id":"${id}"}}`,
    );
    if (frame) return frame;
  }
  return writeMessage(ids, { kind: "interrupt", id });
}

/** The frame of JSON `text` (what encodeFrame writes for the value it parses to), or undefined over the frame limit. */
function plainFrame(text: string): Uint8Array | undefined {
  const length = text.length * 3 <= MAX_FRAME_BYTES ? -1 : Buffer.byteLength(text, "utf8");
  if (length > MAX_FRAME_BYTES) return undefined;
  // At most 3 bytes per UTF-16 unit: encode into room enough, then write the length it took.
  const out = new Uint8Array(HEADER_BYTES + (length < 0 ? text.length * 3 : length));
  const written = utf8.encodeInto(text, out.subarray(HEADER_BYTES)).written;
  new DataView(out.buffer).setUint32(0, written, false);
  return out.subarray(0, HEADER_BYTES + written);
}

/** The stable `code` of a frame or envelope error, or undefined for anything else. */
export function errorCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && typeof (err as { code?: unknown }).code === "string") {
    return (err as { code: string }).code;
  }
  return undefined;
}
