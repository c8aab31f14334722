import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fitsUtf8, utf8Length } from "./text.js";

describe("utf8Length", () => {
  it("counts bytes, not characters", () => {
    expect(utf8Length("")).toBe(0);
    expect(utf8Length("abc")).toBe(3);
    expect(utf8Length("\u00e9")).toBe(2);
    expect(utf8Length("\u20ac")).toBe(3);
    expect(utf8Length("\u{1F600}")).toBe(4);
  });

  it("counts a lone surrogate as 3 bytes, like TextEncoder's U+FFFD", () => {
    expect(utf8Length("\ud800")).toBe(3);
    expect(utf8Length("\udc00x")).toBe(4);
    expect(utf8Length("a\ud83d")).toBe(4);
  });

  it("counts each UTF-16 unit at the edges of the 1-, 2- and 3-byte ranges and of the surrogates", () => {
    const cases: [string, number][] = [
      ["\u007f", 1],
      ["\u0080", 2],
      ["\u07ff", 2],
      ["\u0800", 3],
      ["\ud7ff", 3],
      ["\ud7ff\udc00", 6], // below the high surrogates: no pair
      ["\ud800\udc00", 4],
      ["\udbff\udfff", 4],
      ["\udc00\udc00", 6], // a low surrogate first: no pair
      ["\ud800\udbff", 6], // a high one after a high one: no pair
      ["\ud800\ue000", 6], // past the low surrogates: no pair
      ["\ud800\ud800\udc00", 7], // a lone high, then a pair
      ["\ue000", 3],
      ["\uffff", 3],
      ["a\ud800", 4], // a high surrogate at the end
    ];
    const encoder = new TextEncoder();
    for (const [text, bytes] of cases) {
      expect(encoder.encode(text).length, JSON.stringify(text)).toBe(bytes);
      expect(utf8Length(text), JSON.stringify(text)).toBe(bytes);
    }
  });

  it("agrees with Buffer.byteLength for any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 64 }), (text) => {
        expect(utf8Length(text)).toBe(Buffer.byteLength(text, "utf8"));
      }),
    );
  });

  it("agrees with TextEncoder even with lone surrogates", () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 64 }), (text) => {
        expect(utf8Length(text)).toBe(encoder.encode(text).length);
      }),
    );
  });
});

describe("fitsUtf8", () => {
  it("decides at the exact boundary, through both shortcuts and the count", () => {
    expect(fitsUtf8("a".repeat(10), 10)).toBe(true);
    expect(fitsUtf8("a".repeat(11), 10)).toBe(false);
    expect(fitsUtf8("\u20ac".repeat(3), 9)).toBe(true);
    expect(fitsUtf8("\u20ac".repeat(4), 11)).toBe(false);
  });

  it("matches utf8Length <= limit", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.nat(120), (text, limit) => {
        expect(fitsUtf8(text, limit)).toBe(utf8Length(text) <= limit);
      }),
    );
  });
});
