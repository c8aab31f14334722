import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors, thrownCode } from "../test/vectors.js";
import { formatDuration } from "./duration.js";

/** Reads a formatted duration back to the ms it claims (a lower bound of the true value). */
function claimedMs(text: string): number {
  let m = /^(\d+)ms$/.exec(text);
  if (m) return Number(m[1]);
  m = /^(\d+)\.(\d)s$/.exec(text);
  if (m) return Number(m[1]) * 1000 + Number(m[2]) * 100;
  m = /^(\d+)m([0-5]\d)s$/.exec(text);
  if (m) return (Number(m[1]) * 60 + Number(m[2])) * 1000;
  m = /^(\d+)h([0-5]\d)m([0-5]\d)s$/.exec(text);
  if (m) return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000;
  throw new Error(`not a C9 duration: ${text}`);
}

/** The resolution of the unit a duration of `ms` is shown in. */
function resolution(ms: number): number {
  if (ms < 1000) return 1;
  if (ms < 60_000) return 100;
  return 1000;
}

const durations = fc.oneof(
  fc.integer({ min: 0, max: 10 * 3_600_000 }),
  fc.double({ min: 0, max: 10 * 3_600_000, noNaN: true }),
  fc.constantFrom(999, 999.999, 1000, 59_999, 59_999.9, 60_000, 3_599_999, 3_600_000),
);

describe("formatDuration vectors", () => {
  for (const v of loadVectors("durations.json")) {
    it(v.description, () => {
      if (v.error) expect(thrownCode(() => formatDuration(v.input as number))).toBe(v.error.code);
      else expect(formatDuration(v.input as number)).toBe(v.expected);
    });
  }
});

describe("formatDuration properties", () => {
  it("never rounds up and loses less than one unit", () => {
    fc.assert(
      fc.property(durations, (ms) => {
        const claimed = claimedMs(formatDuration(ms));
        expect(claimed).toBeLessThanOrEqual(ms);
        expect(ms - claimed).toBeLessThan(resolution(ms));
      }),
      { numRuns: 2000 },
    );
  });

  it("is monotonic", () => {
    fc.assert(
      fc.property(durations, durations, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(claimedMs(formatDuration(lo))).toBeLessThanOrEqual(claimedMs(formatDuration(hi)));
      }),
      { numRuns: 2000 },
    );
  });

  it("never renders a relative phrase", () => {
    fc.assert(
      fc.property(durations, (ms) => {
        expect(formatDuration(ms)).not.toMatch(/ago|now|just|about|~/);
      }),
    );
  });

  it("refuses NaN and infinity, naming the value", () => {
    expect(() => formatDuration(Number.NaN)).toThrow(/NaN/);
    expect(thrownCode(() => formatDuration(Number.POSITIVE_INFINITY))).toBe("TRANSCRIPT_INVALID_DURATION");
  });
});
