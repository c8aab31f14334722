import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isDigest, isErrorCode, isIdentifier } from "./identifier.js";

describe("isIdentifier", () => {
  it("accepts 1..128 of A-Z a-z 0-9 _ . -", () => {
    expect(isIdentifier("a")).toBe(true);
    expect(isIdentifier("g-1.root_X9")).toBe(true);
    expect(isIdentifier("x".repeat(128))).toBe(true);
  });

  it("rejects empty, too long, other characters and non-strings", () => {
    for (const bad of ["", "x".repeat(129), "a b", "a/b", "a:b", "caf\u00e9", "root\n", "\u0661", 5, null, ["a"]]) {
      expect(isIdentifier(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it("accepts exactly the strings made of the allowed alphabet", () => {
    const allowed = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
    fc.assert(fc.property(fc.string({ unit: allowed, minLength: 1, maxLength: 128 }), (id) => isIdentifier(id)));
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (text) => {
        expect(isIdentifier(text)).toBe(/^[A-Za-z0-9_.-]{1,128}$/.test(text));
      }),
    );
  });
});

describe("isDigest", () => {
  it("accepts 64 lowercase hex only", () => {
    expect(isDigest("0".repeat(64))).toBe(true);
    expect(isDigest("ab".repeat(32))).toBe(true);
    expect(isDigest("AB".repeat(32))).toBe(false);
    expect(isDigest("0".repeat(63))).toBe(false);
    expect(isDigest("0".repeat(65))).toBe(false);
    expect(isDigest(`${"0".repeat(63)}g`)).toBe(false);
    expect(isDigest(null)).toBe(false);
    // A non-string whose String() is a digest (RegExp.test would coerce it) is still no digest.
    expect(isDigest(["0".repeat(64)])).toBe(false);
    expect(isDigest({ toString: () => "0".repeat(64) })).toBe(false);
  });
});

describe("isErrorCode", () => {
  it("accepts snake_case starting with a letter", () => {
    for (const good of ["not_found", "a", "limit_exceeded2", "x_"]) expect(isErrorCode(good)).toBe(true);
    for (const bad of ["", "NotFound", "not-found", "_x", "1x", "a b", 3]) expect(isErrorCode(bad)).toBe(false);
  });

  it("refuses a non-string whose String() is a code", () => {
    expect(isErrorCode(["not_found"])).toBe(false);
    expect(isErrorCode({ toString: () => "not_found" })).toBe(false);
  });
});
