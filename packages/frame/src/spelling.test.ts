import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "../test/support/runs";
import { MAX_SAFE_INTEGER } from "./constants";
import { literalLengthBound } from "./spelling";

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
// What a JSON number literal can start with (so the enumeration below prunes the rest).
const PREFIX = /^-?((0|[1-9][0-9]*)((\.[0-9]*)|((\.[0-9]+)?[eE][+-]?[0-9]*))?)?$/;

// Every JSON number literal up to `length` characters ("E" spells what "e" does).
function* literals(length: number, prefix = ""): Generator<string> {
  if (JSON_NUMBER.test(prefix)) yield prefix;
  if (prefix.length === length) return;
  for (const c of "0123456789-.e+") if (PREFIX.test(prefix + c)) yield* literals(length, prefix + c);
}

// Literals that read as `value`: its String, and exponent and fixed forms of every precision.
function spellings(value: number): string[] {
  const out = new Set([String(value)]);
  for (let digits = 0; digits <= 20; digits++) {
    const exponent = value.toExponential(digits);
    out.add(exponent.replace("e+", "e"));
    out.add(exponent.replace(/\.?0+e/, "e").replace("e+", "e"));
    const mantissa = exponent.split("e")[0]!.replace(".", "");
    const power = Number(exponent.split("e")[1]) - digits;
    out.add(`${mantissa}e${power}`);
    if (Math.abs(value) < 1e21) out.add(value.toFixed(digits));
  }
  return [...out].filter((s) => JSON_NUMBER.test(s) && Object.is(Number(s), value));
}

describe("literalLengthBound", () => {
  it("is at most the length of every JSON number literal of up to 6 characters", () => {
    let count = 0;
    const tooLong: string[] = [];
    for (const literal of literals(6)) {
      if (literalLengthBound(Number(literal)) > literal.length) tooLong.push(literal);
      count++;
    }
    expect(tooLong).toEqual([]);
    expect(count).toBeGreaterThan(100_000);
  });

  it("is at most the length of every spelling of random numbers", () => {
    const number = fc.oneof(
      fc.double({ noNaN: true }),
      fc.integer({ min: -1e6, max: 1e6 }).map((n) => n * 10 ** (n % 7)),
      fc.integer({ min: -1e6, max: 1e6 }).map((n) => n / 10 ** Math.abs(n % 6)),
      fc.maxSafeInteger(),
    );
    fc.assert(
      fc.property(number, (value) => {
        for (const literal of spellings(value)) expect(literalLengthBound(value), literal).toBeLessThanOrEqual(literal.length);
      }),
      { numRuns: runs(1000), seed: 43 },
    );
  });

  it("is the length of String(value) for safe integers (round ones of 4+ digits aside) and one-decimal numbers", () => {
    for (const value of [0, -0, 7, -7, 10, 100, 999, -999, 1234, 1001, 16384, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0.5, -0.5, 12.5, 1234.5]) {
      expect(literalLengthBound(value), String(value)).toBe(String(value).length);
    }
    expect(literalLengthBound(1000)).toBe(3); // "1e3"
    expect(literalLengthBound(12_000)).toBe(4); // "12e3"
    expect(literalLengthBound(-(10 ** 15))).toBe(5); // "-1e15"
    expect(literalLengthBound(0.25)).toBe(3); // one short of "0.25"
    expect(literalLengthBound(2 ** 60)).toBe(1); // beyond the safe range: unsafe anyway
  });
});
