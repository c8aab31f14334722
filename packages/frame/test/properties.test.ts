import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "./support/runs";
import { decodePayload, encodeFrame, encodePayload, FrameDecoder, isFrameError, MAX_DEPTH } from "../src/index";
import { mutate, rng } from "./support/corpus";

const wellFormed = fc.string({ unit: "grapheme", maxLength: 12 });
const key = fc.oneof(wellFormed, fc.constantFrom("__proto__", "constructor", "1", "", "toString"));
const number = fc.oneof(
  fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !(Number.isInteger(d) && Math.abs(d) > Number.MAX_SAFE_INTEGER && Math.abs(d) < 1e21)),
);
// Keys go in with defineProperty: assigning "__proto__" would change the prototype instead.
const objectOf = (value: fc.Arbitrary<unknown>) =>
  fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 5 }).map((entries) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
const { value: wireValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(null, true, false),
    number,
    wellFormed,
    fc.array(tie("value"), { maxLength: 5 }),
    objectOf(tie("value")),
  ),
}));

// What C1 promises about any value a decoder yields.
function assertC1(value: unknown, depth = 0): void {
  if (typeof value === "number") expect(Number.isFinite(value)).toBe(true);
  else if (typeof value === "string") expect((value as unknown as { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  else if (typeof value === "object" && value !== null) {
    expect(depth).toBeLessThan(MAX_DEPTH);
    for (const [k, v] of Object.entries(value)) {
      assertC1(k, depth + 1);
      assertC1(v, depth + 1);
    }
  } else expect(["boolean", "object"]).toContain(typeof value);
}

const canonical = (v: unknown) => JSON.stringify(v);

describe("properties", () => {
  it("round trip: decode(encode(v)) equals v", () => {
    fc.assert(
      fc.property(wireValue, (value) => {
        expect(canonical(decodePayload(encodePayload(value)))).toBe(canonical(value));
      }),
      { numRuns: runs(1000), seed: 1 },
    );
  });

  it("any chunking of a stream yields the same values as one chunk", () => {
    fc.assert(
      fc.property(fc.array(wireValue, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 8 }), (values, cuts) => {
        const stream = Uint8Array.from(values.flatMap((v) => [...encodeFrame(v)]));
        const offsets = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const decoder = new FrameDecoder();
        const out: unknown[] = [];
        let from = 0;
        for (const at of [...offsets, stream.length]) {
          out.push(...decoder.push(stream.subarray(from, at)));
          from = at;
        }
        decoder.end();
        expect(canonical(out)).toBe(canonical(values));
      }),
      { numRuns: runs(500), seed: 2 },
    );
  });

  it("mutated streams never crash, hang or yield a value that breaks C1, and chunking never changes the outcome", () => {
    fc.assert(
      fc.property(fc.array(wireValue, { minLength: 1, maxLength: 3 }), fc.integer(), fc.integer({ min: 1, max: 4 }), fc.nat(), (values, seed, rounds, cut) => {
        const next = rng(seed);
        let stream: Uint8Array = Uint8Array.from(values.flatMap((v) => [...encodeFrame(v)]));
        for (let i = 0; i < rounds; i++) stream = mutate(stream, next);
        const outcome = (chunks: Uint8Array[]) => {
          const decoder = new FrameDecoder();
          const out: unknown[] = [];
          try {
            for (const c of chunks) out.push(...decoder.push(c));
            decoder.end();
            return { out, code: undefined as string | undefined };
          } catch (error) {
            if (!isFrameError(error)) throw error; // anything else is a crash
            out.push(...error.values);
            return { out, code: error.code };
          }
        };
        const whole = outcome([stream]);
        for (const v of whole.out) assertC1(v);
        const k = cut % (stream.length + 1);
        const split = outcome([stream.subarray(0, k), stream.subarray(k)]);
        expect(canonical(split)).toBe(canonical(whole));
      }),
      { numRuns: runs(2000), seed: 3 },
    );
  });
});
