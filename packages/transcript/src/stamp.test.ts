import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors, thrownCode } from "../test/vectors.js";
import { MAX_STAMP_MS, TIME_UNKNOWN, formatStamp, isUsableTime, stampOrUnknown } from "./stamp.js";

describe("formatStamp vectors", () => {
  for (const v of loadVectors("stamps.json")) {
    it(v.description, () => {
      if (v.error) expect(thrownCode(() => formatStamp(v.input as number))).toBe(v.error.code);
      else expect(formatStamp(v.input as number)).toBe(v.expected);
    });
  }
});

describe("formatStamp", () => {
  it("refuses NaN and infinities, naming the value", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => formatStamp(bad)).toThrow(String(bad));
      expect(thrownCode(() => formatStamp(bad))).toBe("TRANSCRIPT_INVALID_TIME");
    }
  });

  it("always has the Z shape and floors to the second", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_STAMP_MS }), (ms) => {
        const stamp = formatStamp(ms);
        expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
        const back = Date.parse(stamp);
        expect(back).toBeLessThanOrEqual(ms);
        expect(ms - back).toBeLessThan(1000);
      }),
    );
  });

  it("is monotonic", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_STAMP_MS }), fc.integer({ min: 1, max: MAX_STAMP_MS }), (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        // The fixed-width shape makes lexical order the chronological order.
        expect(formatStamp(lo) <= formatStamp(hi)).toBe(true);
      }),
    );
  });
});

describe("formatStamp and stampOrUnknown agree", () => {
  it("epoch zero is time unknown from both, as in @klbr/header", () => {
    expect(formatStamp(0)).toBe(TIME_UNKNOWN);
    expect(formatStamp(0)).toBe(stampOrUnknown(0));
  });
});

describe("isUsableTime / stampOrUnknown", () => {
  it("treats epoch zero, negatives, non-numbers and overflow as unusable", () => {
    for (const bad of [0, 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY, null, undefined, "1789325940000", MAX_STAMP_MS + 1]) {
      expect(isUsableTime(bad)).toBe(false);
      expect(stampOrUnknown(bad)).toBe(TIME_UNKNOWN);
    }
  });

  it("never renders 1970-01-01T00:00:00Z for a missing time but does for a real first millisecond", () => {
    expect(stampOrUnknown(0)).toBe("time unknown");
    expect(stampOrUnknown(1)).toBe("1970-01-01T00:00:00Z");
  });

  it("stamps every usable time", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_STAMP_MS }), (ms) => {
        expect(isUsableTime(ms)).toBe(true);
        expect(stampOrUnknown(ms)).toBe(formatStamp(ms));
      }),
    );
  });
});
