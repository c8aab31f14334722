import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { at, envelope, strictObjectPaths, withKey } from "../test/arbitraries.js";
import { EnvelopeError } from "./error.js";
import { parseEnvelope } from "./parse.js";
import { runs } from "../test/runs.js";

function outcome(value: unknown): { code: string; path: string } | "ok" {
  try {
    parseEnvelope(value);
    return "ok";
  } catch (error) {
    if (error instanceof EnvelopeError) return { code: error.code, path: error.path };
    throw error;
  }
}

describe("properties", () => {
  it("any valid envelope parses to an equal value", () => {
    fc.assert(
      fc.property(envelope, (value) => {
        expect(parseEnvelope(value)).toEqual(value);
      }),
      { numRuns: runs(500) },
    );
  });

  it("an extra key on any strict object fails with ENVELOPE_UNKNOWN_FIELD at that key", () => {
    fc.assert(
      fc.property(
        envelope.chain((value) => fc.tuple(fc.constant(value), fc.constantFrom(...strictObjectPaths(value)))),
        fc.string({ maxLength: 12 }),
        fc.jsonValue({ maxDepth: 1 }),
        ([value, path], key, extra) => {
          fc.pre(!Object.prototype.hasOwnProperty.call(at(value, path), key));
          expect(outcome(withKey(value, path, key, extra))).toEqual({ code: "ENVELOPE_UNKNOWN_FIELD", path: [...path, key].join(".") });
        },
      ),
      { numRuns: runs(500) },
    );
  });

  it("any JSON value either parses or fails with an EnvelopeError (never another error)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const result = outcome(value);
        expect(result === "ok" || typeof result.code === "string").toBe(true);
      }),
      { numRuns: runs(500) },
    );
  });

  it("removing any required field fails with ENVELOPE_MISSING_FIELD at that field", () => {
    const optional = new Set(["cwd", "env", "timeout_ms", "max_output_bytes", "displays_dropped"]);
    fc.assert(
      fc.property(
        envelope.chain((value) => fc.tuple(fc.constant(value), fc.constantFrom(...strictObjectPaths(value)))),
        fc.nat(),
        ([value, path], pick) => {
          const keys = Object.keys(at(value, path) as object).filter((key) => !optional.has(key));
          fc.pre(keys.length > 0);
          const key = keys[pick % keys.length]!;
          const copy = structuredClone(value);
          delete (at(copy, path) as Record<string, unknown>)[key];
          expect(outcome(copy)).toEqual({ code: "ENVELOPE_MISSING_FIELD", path: [...path, key].join(".") });
        },
      ),
      { numRuns: runs(500) },
    );
  });
});
