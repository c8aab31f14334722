import * as v from "valibot";
import { envelopeSchema, EnvelopeSchema, type ExpectedIdentity } from "./envelope.js";
import { EnvelopeError } from "./error.js";
import { fastEnvelope } from "./fast.js";
import {
  AttentionInputSchema,
  AttentionResultSchema,
  DeliveryInputSchema,
  DeliveryResultSchema,
} from "./hook.js";
import { HostRequestSchema } from "./host-request.js";
import { PROTOCOL_VERSION } from "./limits.js";
import { HelloMessageSchema, WORKER_ROLES } from "./message.js";
import type {
  Envelope,
  HelloMessage,
  HookInputOf,
  HookResultOf,
  HookSlot,
  HostRequest,
  Message,
  WorkerRole,
} from "./types.js";
import { toEnvelopeError } from "./issues.js";
import { REPLY_VALUE_SCHEMAS, type ReplyMethod } from "./reply.js";
import { variantOf } from "./rules.js";

// A variant of one option, so a message of another kind is ENVELOPE_UNKNOWN_KIND.
const HelloOnlySchema = variantOf("kind", [HelloMessageSchema]);

// The first issue decides the code, so stop at it: the check order is the schema order.
const CONFIG = { abortEarly: true, abortPipeEarly: true } as const;

function run<S extends v.GenericSchema>(schema: S, value: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, value, CONFIG);
  if (result.success) return result.output;
  // safeParse with success false always carries at least one issue.
  throw toEnvelopeError(result.issues[0]!);
}

/**
 * Validate a decoded frame value as an envelope. When `expected` names a session or generation,
 * a different one fails with ENVELOPE_SESSION_MISMATCH / ENVELOPE_GENERATION_MISMATCH.
 * Throws {@link EnvelopeError}; returns a fresh, validated value.
 */
export function parseEnvelope(value: unknown, expected?: ExpectedIdentity): Envelope {
  const sessionId = expected?.sessionId;
  const generation = expected?.generation;
  // The hot kinds are built by hand when they are surely valid; the schema decides everything else.
  return fastEnvelope(value, sessionId, generation) ?? (run(schemaFor(sessionId, generation), value) as Envelope);
}

// A connection parses every frame with the same expectation: keep a few schemas built.
const SCHEMA_CACHE_SIZE = 64;
const schemas = new Map<string, ReturnType<typeof envelopeSchema>>();

function schemaFor(sessionId: string | undefined, generation: string | undefined): ReturnType<typeof envelopeSchema> {
  if (sessionId === undefined && generation === undefined) return EnvelopeSchema;
  const key = JSON.stringify([sessionId ?? null, generation ?? null]);
  let schema = schemas.get(key);
  if (schema === undefined) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator: when (or whether) the private cache is emptied changes only memory, never a result
    if (schemas.size >= SCHEMA_CACHE_SIZE) schemas.clear();
    schema = envelopeSchema({ sessionId, generation });
    schemas.set(key, schema);
  }
  return schema;
}

/** Like {@link parseEnvelope}, but returns the outcome instead of throwing. */
export function safeParseEnvelope(
  value: unknown,
  expected?: ExpectedIdentity,
): { ok: true; envelope: Envelope } | { ok: false; error: EnvelopeError } {
  try {
    return { ok: true, envelope: parseEnvelope(value, expected) };
  } catch (error) {
    if (error instanceof EnvelopeError) return { ok: false, error };
    throw error;
  }
}

/** Validate one host request object (`{"method": ..., ...}`). Throws {@link EnvelopeError}. */
export function parseHostRequest(value: unknown): HostRequest {
  return run(HostRequestSchema, value);
}

/**
 * Validate the ok value of a reply to `method` (the C11 maintenance and orientation shapes).
 * Throws {@link EnvelopeError} (paths from the value); RangeError for a method without a pinned shape.
 */
export function parseReplyValue<M extends ReplyMethod>(method: M, value: unknown): v.InferOutput<(typeof REPLY_VALUE_SCHEMAS)[M]> {
  const schema = (REPLY_VALUE_SCHEMAS as Record<string, v.GenericSchema>)[method];
  if (!schema) throw new RangeError(`no reply shape is pinned for ${JSON.stringify(method)}`);
  return run(schema, value) as never;
}

function slotSchemas(slot: HookSlot) {
  if (slot === "attention.plan") return { input: AttentionInputSchema, result: AttentionResultSchema };
  if (slot === "delivery.review") return { input: DeliveryInputSchema, result: DeliveryResultSchema };
  throw new RangeError(`unknown hook slot ${JSON.stringify(slot)}`);
}

/** Validate the typed input of `slot` (C6). Throws {@link EnvelopeError}; RangeError for an unknown slot. */
export function parseHookInput<S extends HookSlot>(slot: S, value: unknown): HookInputOf<S> {
  return run(slotSchemas(slot).input, value) as HookInputOf<S>;
}

/** Validate the result of `slot` (C6). Throws {@link EnvelopeError}; RangeError for an unknown slot. */
export function parseHookResult<S extends HookSlot>(slot: S, value: unknown): HookResultOf<S> {
  return run(slotSchemas(slot).result, value) as HookResultOf<S>;
}

/**
 * Validate a `hello` message (the envelope's `message`). A message of another kind is
 * ENVELOPE_UNKNOWN_KIND; when `role` is given, a hello of the other role is ENVELOPE_ROLE_MISMATCH.
 */
export function parseHello(message: unknown, role?: WorkerRole): HelloMessage {
  if (role !== undefined && !(WORKER_ROLES as readonly string[]).includes(role)) {
    throw new RangeError(`unknown worker role ${JSON.stringify(role)}`);
  }
  const hello = run(HelloOnlySchema, message);
  if (role !== undefined && hello.role !== role) {
    throw new EnvelopeError("ENVELOPE_ROLE_MISMATCH", "role", hello.role, JSON.stringify(role));
  }
  return hello;
}

/** Build a validated envelope around `message`. Throws {@link EnvelopeError} when it is not valid. */
export function makeEnvelope<M extends Message>(sessionId: string, generation: string, message: M): Envelope & { message: M } {
  return parseEnvelope({ version: PROTOCOL_VERSION, session_id: sessionId, generation, message }) as Envelope & { message: M };
}
