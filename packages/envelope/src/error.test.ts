import { describe, expect, it } from "vitest";
import { ENVELOPE_ERROR_CODES, EnvelopeError, isEnvelopeError } from "./error.js";
import { parseEnvelope } from "./parse.js";

describe("EnvelopeError", () => {
  it("names the code, the field path and the value in its message", () => {
    const error = new EnvelopeError("ENVELOPE_BAD_IDENTIFIER", "message.id", "a b", "an identifier");
    expect(error.message).toBe('ENVELOPE_BAD_IDENTIFIER at message.id: expected an identifier, got "a b"');
    expect(error.code).toBe("ENVELOPE_BAD_IDENTIFIER");
    expect(error.path).toBe("message.id");
    expect(error.value).toBe("a b");
    expect(error.name).toBe("EnvelopeError");
  });

  it("says <root> and nothing for a missing value at the root", () => {
    expect(new EnvelopeError("ENVELOPE_NOT_OBJECT", "", undefined, "an object").message).toBe(
      "ENVELOPE_NOT_OBJECT at <root>: expected an object, got nothing",
    );
  });

  it("shortens long values", () => {
    const error = new EnvelopeError("ENVELOPE_LIMIT_EXCEEDED", "message.code", "x".repeat(1000), "fewer bytes");
    expect(error.message.length).toBeLessThan(200);
    expect(error.message).toContain("(1002 chars)");
  });

  it("is recognised by brand, also across copies of the package", () => {
    expect(isEnvelopeError(new EnvelopeError("ENVELOPE_NOT_OBJECT", "", 1, "x"))).toBe(true);
    expect(isEnvelopeError(new Error("x"))).toBe(false);
    expect(isEnvelopeError({ code: "ENVELOPE_NOT_OBJECT" })).toBe(false);
    const foreign = Object.defineProperty({}, Symbol.for("@klbr/envelope.EnvelopeError"), { value: true });
    expect(isEnvelopeError(foreign)).toBe(true);
  });

  it("is false, without throwing, for null, undefined, primitives and a branded function", () => {
    for (const value of [null, undefined, 0, "ENVELOPE_NOT_OBJECT", true]) expect(isEnvelopeError(value)).toBe(false);
    // Only an object carries the brand: a function with the symbol set is no error.
    const branded = Object.defineProperty(() => 1, Symbol.for("@klbr/envelope.EnvelopeError"), { value: true });
    expect(isEnvelopeError(branded)).toBe(false);
  });

  it("renders a value JSON cannot (a cycle, a BigInt) by its tag", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(new EnvelopeError("ENVELOPE_INVALID_FIELD", "x", cycle, "a value").message).toBe(
      "ENVELOPE_INVALID_FIELD at x: expected a value, got [object Object]",
    );
    expect(new EnvelopeError("ENVELOPE_INVALID_FIELD", "x", 10n, "a value").message).toBe(
      "ENVELOPE_INVALID_FIELD at x: expected a value, got [object BigInt]",
    );
  });

  it("keeps a preview of exactly 80 characters whole and cuts one of 81", () => {
    const exact = "x".repeat(78); // JSON adds the two quotes: 80 characters
    expect(new EnvelopeError("ENVELOPE_INVALID_FIELD", "x", exact, "a value").message).toBe(
      `ENVELOPE_INVALID_FIELD at x: expected a value, got "${exact}"`,
    );
    expect(new EnvelopeError("ENVELOPE_INVALID_FIELD", "x", exact + "y", "a value").message).toBe(
      `ENVELOPE_INVALID_FIELD at x: expected a value, got "${exact}y... (81 chars)`,
    );
  });

  it("lists twenty-three distinct ENVELOPE_ codes", () => {
    expect(new Set(ENVELOPE_ERROR_CODES).size).toBe(23);
    for (const code of ENVELOPE_ERROR_CODES) expect(code).toMatch(/^ENVELOPE_[A-Z_]+$/);
  });

  it("carries the path and value of a real parse failure", () => {
    const input = { version: 1, session_id: "root", generation: "g-1", message: { kind: "interrupt", id: "no way" } };
    try {
      parseEnvelope(input);
      expect.unreachable();
    } catch (error) {
      expect(isEnvelopeError(error)).toBe(true);
      const e = error as EnvelopeError;
      expect([e.code, e.path, e.value]).toEqual(["ENVELOPE_BAD_IDENTIFIER", "message.id", "no way"]);
      expect(e.message).toContain('"no way"');
    }
  });
});
