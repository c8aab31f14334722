import { isDigest } from "./digest.js";
import { describe, HeaderError, type HeaderErrorCode } from "./errors.js";
import { checkPatch } from "./patch.js";
import { isWellFormedText } from "./sources.js";
import type { Actor, Change, HeaderPin, HeaderRecord, HeaderRevision, PinReason, RecordedSource } from "./types.js";

const PIN_REASONS: readonly PinReason[] = ["session_start", "fold", "fold_covered_revision"];
const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;

type Fields = Record<string, unknown>;

function object(value: unknown, what: string, code: HeaderErrorCode): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HeaderError(code, `${what} must be an object, got ${describe(value)}`);
  }
  return value as Fields;
}

// Stryker disable next-line ArrayDeclaration: a default naming a field no record carries would only admit that one name
function fields(value: Fields, what: string, code: HeaderErrorCode, required: string[], optional: string[] = []): void {
  for (const key of Object.keys(value)) {
    if (!required.includes(key) && !optional.includes(key)) {
      throw new HeaderError(code, `${what} has an unknown field ${describe(key)}`);
    }
  }
  for (const key of required) {
    if (!(key in value) || value[key] === undefined) throw new HeaderError(code, `${what} lacks the field ${describe(key)}`);
  }
}

function text(value: unknown, what: string, code: HeaderErrorCode = "HEADER_INVALID_RECORD"): string {
  if (!isWellFormedText(value)) throw new HeaderError(code, `${what} ${describe(value)} is not a well-formed string`);
  return value;
}

function digest(value: unknown, what: string): string {
  if (!isDigest(value)) throw new HeaderError("HEADER_INVALID_RECORD", `${what} ${describe(value)} is not 64 lowercase hex characters`);
  return value;
}

/** Check an instant in milliseconds since the epoch: a non-negative safe integer. */
export function checkTime(value: unknown, what = "time"): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new HeaderError("HEADER_INVALID_TIME", `${what} ${describe(value)} is not a non-negative integer of milliseconds`);
  }
  return value;
}

/**
 * Check an actor strictly and copy it: a session actor names its execution (an identifier) and
 * step (an integer >= 0); a host actor carries only what is known (`reason`, `path`), never an
 * execution or step someone would have to invent. Unknown fields fail.
 */
export function checkActor(value: unknown): Actor {
  const actor = object(value, "actor", "HEADER_INVALID_ACTOR");
  const extras = (out: Actor): Actor => {
    for (const key of ["path", "reason"] as const) {
      if (key in actor && actor[key] !== undefined) out[key] = text(actor[key], `actor ${key}`, "HEADER_INVALID_ACTOR");
    }
    return out;
  };
  if (actor.origin === "session") {
    fields(actor, "session actor", "HEADER_INVALID_ACTOR", ["origin", "execution_id", "step"], ["path", "reason"]);
    if (typeof actor.execution_id !== "string" || !IDENTIFIER.test(actor.execution_id)) {
      throw new HeaderError("HEADER_INVALID_ACTOR", `execution_id ${describe(actor.execution_id)} is not an identifier`);
    }
    if (typeof actor.step !== "number" || !Number.isSafeInteger(actor.step) || actor.step < 0) {
      throw new HeaderError("HEADER_INVALID_ACTOR", `step ${describe(actor.step)} is not a non-negative integer`);
    }
    return extras({ origin: "session", execution_id: actor.execution_id, step: actor.step });
  }
  if (actor.origin === "host") {
    fields(actor, "host actor", "HEADER_INVALID_ACTOR", ["origin"], ["path", "reason"]);
    return extras({ origin: "host" });
  }
  throw new HeaderError("HEADER_INVALID_ACTOR", `actor origin ${describe(actor.origin)} is neither session nor host`);
}

function checkChange(value: unknown): Change {
  const change = object(value, "change", "HEADER_INVALID_RECORD");
  if (change.form === "full") {
    fields(change, "full change", "HEADER_INVALID_RECORD", ["form", "text"]);
    return { form: "full", text: text(change.text, "change text") };
  }
  if (change.form === "diff") {
    fields(change, "diff change", "HEADER_INVALID_RECORD", ["form", "base_digest", "patches"]);
    if (!Array.isArray(change.patches)) {
      throw new HeaderError("HEADER_INVALID_RECORD", `change patches ${describe(change.patches)} is not an array`);
    }
    return { form: "diff", base_digest: digest(change.base_digest, "base_digest"), patches: change.patches.map(checkPatch) };
  }
  throw new HeaderError("HEADER_INVALID_RECORD", `change form ${describe(change.form)} is neither diff nor full`);
}

function checkRecordedSources(value: unknown): RecordedSource[] {
  if (!Array.isArray(value)) throw new HeaderError("HEADER_INVALID_RECORD", `sources ${describe(value)} is not an array`);
  const names = new Set<string>();
  return value.map((item, index) => {
    const source = object(item, `source ${index}`, "HEADER_INVALID_RECORD");
    fields(source, `source ${index}`, "HEADER_INVALID_RECORD", ["name", "digest", "text"]);
    const name = text(source.name, "source name");
    if (name.length === 0 || names.has(name)) {
      throw new HeaderError("HEADER_INVALID_RECORD", `source name ${describe(name)} is empty or repeated`);
    }
    names.add(name);
    return { name, digest: digest(source.digest, `source ${describe(name)} digest`), text: text(source.text, "source text") };
  });
}

/** Check a `header_pin` record's shape strictly (unknown fields fail) and copy it. */
export function parseHeaderPin(value: unknown): HeaderPin {
  const pin = object(value, "header_pin", "HEADER_INVALID_RECORD");
  fields(pin, "header_pin", "HEADER_INVALID_RECORD", ["type", "digest", "text", "reason", "pinned_at_ms"]);
  if (pin.type !== "header_pin") throw new HeaderError("HEADER_INVALID_RECORD", `record type ${describe(pin.type)} is not header_pin`);
  if (!PIN_REASONS.includes(pin.reason as PinReason)) {
    throw new HeaderError("HEADER_INVALID_RECORD", `pin reason ${describe(pin.reason)} is not one of ${PIN_REASONS.join(", ")}`);
  }
  return {
    type: "header_pin",
    digest: digest(pin.digest, "pin digest"),
    text: text(pin.text, "pin text"),
    reason: pin.reason as PinReason,
    pinned_at_ms: checkTime(pin.pinned_at_ms, "pinned_at_ms"),
  };
}

/** Check a `header_revision` record's shape strictly (unknown fields fail) and copy it. */
export function parseHeaderRevision(value: unknown): HeaderRevision {
  const revision = object(value, "header_revision", "HEADER_INVALID_RECORD");
  fields(revision, "header_revision", "HEADER_INVALID_RECORD", ["type", "digest", "change", "sources", "actor", "observed_at_ms"]);
  if (revision.type !== "header_revision") {
    throw new HeaderError("HEADER_INVALID_RECORD", `record type ${describe(revision.type)} is not header_revision`);
  }
  return {
    type: "header_revision",
    digest: digest(revision.digest, "revision digest"),
    change: checkChange(revision.change),
    sources: checkRecordedSources(revision.sources),
    actor: checkActor(revision.actor),
    observed_at_ms: checkTime(revision.observed_at_ms, "observed_at_ms"),
  };
}

/** Check any header record (pin or revision) by its `type`; shape only, digests are checked by resolve. */
export function parseHeaderRecord(value: unknown): HeaderRecord {
  const type = (value as { type?: unknown } | null)?.type;
  if (type === "header_pin") return parseHeaderPin(value);
  if (type === "header_revision") return parseHeaderRevision(value);
  throw new HeaderError("HEADER_INVALID_RECORD", `record type ${describe(type)} is neither header_pin nor header_revision`);
}
