// Plain envelopes of the hot message kinds, validated by hand. This is a shortcut in front of the
// schema, not a second validator: it answers only when it is sure the schema would accept the
// value, and then builds exactly what the schema builds. Anything else is left to the schema,
// so every error (code, path, message) comes from one place.
import * as v from "valibot";
import { isErrorCode, isIdentifier } from "./identifier.js";
import { HostRequestSchema } from "./host-request.js";
import { MAX_CELL_SOURCE_BYTES, MAX_ERROR_BYTES, MAX_OUTPUT_RECORDS, MAX_OUTPUT_TEXT_BYTES, PROTOCOL_VERSION } from "./limits.js";
import { isPlainObject } from "./rules.js";
import { fitsUtf8, utf8Length } from "./text.js";
import type { CompletedResult, Envelope, HostReply, Message, OutputRecord } from "./types.js";

type Node = Record<string, unknown>;

// The same flags parse.ts runs the schema with.
const CONFIG = { abortEarly: true, abortPipeEarly: true } as const;

/**
 * The exact key set of a valibot strictObject. It reads each entry with `key in input` and
 * rejects any key `for...in` yields (own or inherited, enumerable) that is not an entry. for...in
 * never yields a key twice, so "each key it yields is one of the `count` distinct names, and it
 * yields `count` of them" means every entry is present and nothing else is. (An entry that is
 * present but not enumerable passes the schema and fails here: the schema then decides.)
 * Unused name slots repeat `a`.
 */
function hasExactly(input: Node, count: number, a: string, b = a, c = a, d = a, e = a, f = a): boolean {
  let seen = 0;
  for (const key in input) {
    if (key !== a && key !== b && key !== c && key !== d && key !== e && key !== f) return false;
    seen++;
  }
  return seen === count;
}

/** `text` is a string of at most `limit` UTF-8 bytes (`boundedText`). */
function isBoundedText(text: unknown, limit: number): text is string {
  return typeof text === "string" && fitsUtf8(text, limit);
}

/**
 * The envelope the schema would return for `value` with this expected identity, built by hand,
 * when `value` is a valid envelope of a hot kind (`execute`, `completed` with a `cell` or `failed`
 * result, `host_request`, `host_reply`, `interrupt`, `shutdown`); undefined when it is anything
 * else or anything this function is not sure of. Fields are read once each, in the schema's order.
 */
export function fastEnvelope(value: unknown, sessionId: string | undefined, generation: string | undefined): Envelope | undefined {
  if (!isPlainObject(value) || !hasExactly(value, 4, "version", "session_id", "generation", "message")) return undefined;
  const version = value.version;
  if (version !== PROTOCOL_VERSION) return undefined;
  const session = value.session_id;
  if (!isIdentifier(session) || (sessionId !== undefined && session !== sessionId)) return undefined;
  const gen = value.generation;
  if (!isIdentifier(gen) || (generation !== undefined && gen !== generation)) return undefined;
  const message = fastMessage(value.message);
  if (message === undefined) return undefined;
  return { version, session_id: session, generation: gen, message };
}

function fastMessage(message: unknown): Message | undefined {
  if (!isPlainObject(message)) return undefined;
  const kind = message.kind;
  switch (kind) {
    case "execute": {
      if (!hasExactly(message, 3, "kind", "id", "code")) return undefined;
      const id = message.id;
      if (!isIdentifier(id)) return undefined;
      const code = message.code;
      if (!isBoundedText(code, MAX_CELL_SOURCE_BYTES)) return undefined;
      return { kind, id, code };
    }
    case "completed": {
      if (!hasExactly(message, 3, "kind", "id", "result")) return undefined;
      const id = message.id;
      if (!isIdentifier(id)) return undefined;
      const result = fastResult(message.result);
      if (result === undefined) return undefined;
      return { kind, id, result };
    }
    case "host_request": {
      if (!hasExactly(message, 4, "kind", "id", "execution_id", "request")) return undefined;
      const id = message.id;
      if (!isIdentifier(id)) return undefined;
      const executionId = message.execution_id;
      if (!isIdentifier(executionId)) return undefined;
      // The request goes through its own schema: the same schema, value and flags, so the same output.
      const request = v.safeParse(HostRequestSchema, message.request, CONFIG);
      if (!request.success) return undefined;
      return { kind, id, execution_id: executionId, request: request.output };
    }
    case "host_reply": {
      if (!hasExactly(message, 4, "kind", "id", "execution_id", "reply")) return undefined;
      const id = message.id;
      if (!isIdentifier(id)) return undefined;
      const executionId = message.execution_id;
      if (!isIdentifier(executionId)) return undefined;
      const reply = fastReply(message.reply);
      if (reply === undefined) return undefined;
      return { kind, id, execution_id: executionId, reply };
    }
    case "interrupt": {
      if (!hasExactly(message, 2, "kind", "id")) return undefined;
      const id = message.id;
      if (!isIdentifier(id)) return undefined;
      return { kind, id };
    }
    case "shutdown":
      return hasExactly(message, 1, "kind") ? { kind } : undefined;
    // Stryker disable next-line ConditionalExpression: without the default label an unknown kind leaves the switch and the function returns undefined all the same
    default:
      return undefined;
  }
}

function fastReply(reply: unknown): HostReply | undefined {
  if (!isPlainObject(reply)) return undefined;
  const kind = reply.kind;
  if (kind === "ok") {
    // `value` is v.unknown(): any value, the same reference.
    return hasExactly(reply, 2, "kind", "value") ? { kind, value: reply.value } : undefined;
  }
  if (kind === "error") {
    if (!hasExactly(reply, 3, "kind", "code", "message")) return undefined;
    const code = reply.code;
    if (!isErrorCode(code)) return undefined;
    const text = reply.message;
    if (typeof text !== "string") return undefined;
    return { kind, code, message: text };
  }
  return undefined;
}

function fastResult(result: unknown): CompletedResult | undefined {
  if (!isPlainObject(result)) return undefined;
  const kind = result.kind;
  if (kind === "cell") {
    // Five fields, or six with C20's displays_dropped (whose value is read last, in schema order).
    const count = "displays_dropped" in result ? 6 : 5;
    if (!hasExactly(result, count, "kind", "status", "output", "truncated_bytes", "error", "displays_dropped")) return undefined;
    const status = result.status;
    if (status !== "ok" && status !== "error" && status !== "yielded" && status !== "interrupted") return undefined;
    const output = fastRecords(result.output);
    if (output === undefined) return undefined;
    // Number.isSafeInteger is false for anything but a number, NaN included; -0 passes and stays -0.
    const truncated = result.truncated_bytes;
    if (!Number.isSafeInteger(truncated) || (truncated as number) < 0) return undefined;
    const error = result.error;
    if (error !== null && !isBoundedText(error, MAX_ERROR_BYTES)) return undefined;
    if (count === 5) return { kind, status, output, truncated_bytes: truncated as number, error };
    const dropped = result.displays_dropped;
    if (!Number.isSafeInteger(dropped) || (dropped as number) < 0) return undefined;
    return { kind, status, output, truncated_bytes: truncated as number, error, displays_dropped: dropped as number };
  }
  if (kind === "failed") {
    if (!hasExactly(result, 2, "kind", "error")) return undefined;
    const error = result.error;
    if (!isBoundedText(error, MAX_ERROR_BYTES)) return undefined;
    return { kind, error };
  }
  return undefined;
}

function fastRecords(output: unknown): OutputRecord[] | undefined {
  if (!Array.isArray(output) || output.length > MAX_OUTPUT_RECORDS) return undefined;
  const records: OutputRecord[] = [];
  // The limit is on the UTF-8 total; a UTF-16 unit is 1 to 3 bytes, so the lengths often decide.
  let units = 0;
  for (let index = 0; index < output.length; index++) {
    const item: unknown = output[index];
    if (!isPlainObject(item) || !hasExactly(item, 2, "stream", "text")) return undefined;
    const stream = item.stream;
    if (stream !== "stdout" && stream !== "stderr" && stream !== "result") return undefined;
    const text = item.text;
    if (typeof text !== "string") return undefined;
    units += text.length;
    records.push({ stream, text });
  }
  if (units > MAX_OUTPUT_TEXT_BYTES) return undefined;
  if (units * 3 > MAX_OUTPUT_TEXT_BYTES) {
    let bytes = 0;
    for (const record of records) bytes += utf8Length(record.text);
    if (bytes > MAX_OUTPUT_TEXT_BYTES) return undefined;
  }
  return records;
}
