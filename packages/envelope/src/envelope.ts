import * as v from "valibot";
import { PROTOCOL_VERSION } from "./limits.js";
import { MessageSchema } from "./message.js";
import { identifier, record, rule } from "./rules.js";

const isVersion = rule("ENVELOPE_BAD_VERSION", `version ${PROTOCOL_VERSION}`, (value: unknown): value is 1 => value === PROTOCOL_VERSION);

/** The `version` field: exactly 1 (as a JSON number; `1.0` reads as 1). */
export const VersionSchema = v.pipe(v.unknown(), v.guard(isVersion));

/** What the reader of a frame expects the envelope's identity to be. */
export interface ExpectedIdentity {
  /** When given, a different `session_id` is ENVELOPE_SESSION_MISMATCH. */
  sessionId?: string | undefined;
  /** When given, a different `generation` is ENVELOPE_GENERATION_MISMATCH. */
  generation?: string | undefined;
}

function expecting(code: "ENVELOPE_SESSION_MISMATCH" | "ENVELOPE_GENERATION_MISMATCH", expected: string | undefined) {
  if (expected === undefined) return identifier;
  return v.pipe(identifier, v.check(rule(code, JSON.stringify(expected), (value: string) => value === expected)));
}

/** The envelope schema for one expectation; identity is checked at its field, before `message`. */
export function envelopeSchema(expected: ExpectedIdentity = {}) {
  return record({
    version: VersionSchema,
    session_id: expecting("ENVELOPE_SESSION_MISMATCH", expected.sessionId),
    generation: expecting("ENVELOPE_GENERATION_MISMATCH", expected.generation),
    message: MessageSchema,
  });
}

/** The envelope schema with no identity expectation. */
export const EnvelopeSchema = envelopeSchema();
