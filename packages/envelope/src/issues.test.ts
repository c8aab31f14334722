// toEnvelopeError on issues the package's own schemas never raise (its record() and variantOf()
// check for a plain object first), so only a direct call reaches these branches.
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { envelopeErrorOf } from "../test/thrown.js";
import { EnvelopeError } from "./error.js";
import { toEnvelopeError } from "./issues.js";
import { parseEnvelope } from "./parse.js";

const CONFIG = { abortEarly: true, abortPipeEarly: true } as const;

function firstIssue(schema: v.GenericSchema, value: unknown): v.BaseIssue<unknown> {
  const result = v.safeParse(schema, value, CONFIG);
  expect(result.success).toBe(false);
  return result.issues![0]!;
}

describe("toEnvelopeError", () => {
  it("makes a bare strict object given a non-object ENVELOPE_NOT_OBJECT, at its field", () => {
    const atRoot = toEnvelopeError(firstIssue(v.strictObject({ a: v.string() }), 5));
    expect(atRoot).toBeInstanceOf(EnvelopeError);
    expect([atRoot.code, atRoot.path, atRoot.value]).toEqual(["ENVELOPE_NOT_OBJECT", "", 5]);
    expect(atRoot.message).toBe("ENVELOPE_NOT_OBJECT at <root>: expected an object, got 5");
    const nested = toEnvelopeError(firstIssue(v.object({ x: v.strictObject({ a: v.string() }) }), { x: "no" }));
    expect([nested.code, nested.path, nested.value]).toEqual(["ENVELOPE_NOT_OBJECT", "x", "no"]);
  });

  it("makes an unknown value of a discriminator it does not know ENVELOPE_INVALID_FIELD", () => {
    const error = toEnvelopeError(firstIssue(v.variant("type", [v.object({ type: v.literal("a") })]), { type: "b" }));
    expect([error.code, error.path, error.value]).toEqual(["ENVELOPE_INVALID_FIELD", "type", "b"]);
    expect(error.message).toBe('ENVELOPE_INVALID_FIELD at type: expected one of "a", got "b"');
  });

  it("says 'the known values' for a variant issue that names no expectation", () => {
    const issue = firstIssue(v.variant("kind", [v.object({ kind: v.literal("a") })]), { kind: "b" });
    const error = toEnvelopeError({ ...issue, expected: null });
    expect(error.code).toBe("ENVELOPE_UNKNOWN_KIND");
    expect(error.message).toBe('ENVELOPE_UNKNOWN_KIND at kind: expected one of the known values, got "b"');
  });

  it("makes a check that is not a registered rule ENVELOPE_INVALID_FIELD, expecting 'a valid value'", () => {
    const error = toEnvelopeError(firstIssue(v.pipe(v.string(), v.check(() => false)), "x"), ["message", "code"]);
    expect([error.code, error.path, error.value]).toEqual(["ENVELOPE_INVALID_FIELD", "message.code", "x"]);
    expect(error.message).toBe('ENVELOPE_INVALID_FIELD at message.code: expected a valid value, got "x"');
  });

  it("maps a loose object's missing key as a strict object's: ENVELOPE_MISSING_FIELD", () => {
    const error = toEnvelopeError(firstIssue(v.looseObject({ a: v.string() }), { b: 1 }));
    expect([error.code, error.path, error.value]).toEqual(["ENVELOPE_MISSING_FIELD", "a", undefined]);
    expect(error.message).toBe("ENVELOPE_MISSING_FIELD at a: expected a value, got nothing");
  });

  it("makes a bad key of a record ENVELOPE_INVALID_FIELD, not an unknown field (only object issues name fields)", () => {
    const error = toEnvelopeError(firstIssue(v.record(v.picklist(["a"]), v.string()), { b: "x" }));
    expect([error.code, error.path, error.value]).toEqual(["ENVELOPE_INVALID_FIELD", "b", "x"]);
  });

  it("says what an unknown and a missing field expected, and what the root value was", () => {
    const base = { version: 1, session_id: "root", generation: "g-1" };
    const unknown = toEnvelopeError(firstIssue(v.strictObject({ a: v.string() }), { a: "x", extra: 2 }), ["message"]);
    expect(unknown.message).toBe("ENVELOPE_UNKNOWN_FIELD at message.extra: expected no such field, got 2");
    expect(() => parseEnvelope({ ...base })).toThrow("ENVELOPE_MISSING_FIELD at message: expected a value, got nothing");
    const root = envelopeErrorOf(() => parseEnvelope(5));
    expect([root.code, root.path, root.value]).toEqual(["ENVELOPE_NOT_OBJECT", "", 5]);
  });
});

describe("toEnvelopeError messages and values", () => {
  const base = { version: 1, session_id: "root", generation: "g-1" };

  it("makes a variant given a non-object ENVELOPE_INVALID_FIELD at the root, with the value", () => {
    const error = toEnvelopeError(firstIssue(v.variant("kind", [v.object({ kind: v.literal("a") })]), 5));
    expect([error.code, error.path, error.value]).toEqual(["ENVELOPE_INVALID_FIELD", "", 5]);
    expect(error.message).toBe("ENVELOPE_INVALID_FIELD at <root>: expected Object, got 5");
  });

  it("says what a schema's own check expected (a type), and which methods and kinds there are", () => {
    const typed = toEnvelopeError(firstIssue(v.object({ a: v.string() }), { a: 5 }));
    expect(typed.message).toBe("ENVELOPE_INVALID_FIELD at a: expected string, got 5");
    expect(() => parseEnvelope({ ...base, message: { kind: "host_request", id: "q", execution_id: "x", request: { method: "nope" } } })).toThrow(
      'ENVELOPE_UNKNOWN_METHOD at message.request.method: expected a host request method, got "nope"',
    );
    expect(() => parseEnvelope({ ...base, message: { kind: "completed", id: "c", result: { kind: "nope" } } })).toThrow(
      'ENVELOPE_UNKNOWN_KIND at message.result.kind: expected one of ("cell" | "hook" | "failed"), got "nope"',
    );
  });

  it("names the version it expected", () => {
    expect(() => parseEnvelope({ ...base, version: 2, message: { kind: "shutdown" } })).toThrow(
      "ENVELOPE_BAD_VERSION at version: expected version 1, got 2",
    );
  });
});

