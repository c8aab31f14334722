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
