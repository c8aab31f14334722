import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "../test/helpers/runs.js";
import { findDuplicateKey, jsonDepth } from "./json-keys.js";

describe("findDuplicateKey", () => {
  it("finds repeated keys at any depth, after unescaping", () => {
    expect(findDuplicateKey('{"a":1,"a":2}')).toBe("a");
    expect(findDuplicateKey('{"a":{"b":[{"c":1,"\\u0063":2}]}}')).toBe("c");
    expect(findDuplicateKey('[{"x":"}\\"{","x":0}]')).toBe("x");
  });

  it("accepts the same key in different objects", () => {
    expect(findDuplicateKey('{"a":{"a":1},"b":[{"a":2},{"a":3}]}')).toBeNull();
    expect(findDuplicateKey(' { } ')).toBeNull();
    expect(findDuplicateKey('"{\\"a\\":1,\\"a\\":1}"')).toBeNull();
  });

  it("finds nothing in anything JSON.stringify produces", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => findDuplicateKey(JSON.stringify(value, null, 1)) === null), { numRuns: runs(100) });
  });
});

describe("jsonDepth", () => {
  it("comes back down after each closed container, of either kind", () => {
    expect(jsonDepth("[[],[]]")).toBe(2);
    expect(jsonDepth('{"a":{},"b":{},"c":{}}')).toBe(2);
    expect(jsonDepth('[{"a":[]},{"b":[]},[[]]]')).toBe(3);
  });

  it("counts nesting outside strings", () => {
    expect(jsonDepth("1")).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('["[[[{", "\\"[["]')).toBe(1);
  });

  it("agrees with the structure of generated values", () => {
    const depthOf = (v: unknown): number =>
      v !== null && typeof v === "object" ? 1 + Math.max(0, ...Object.values(v as object).map(depthOf)) : 0;
    fc.assert(fc.property(fc.jsonValue(), (value) => jsonDepth(JSON.stringify(value)) === depthOf(value)), { numRuns: runs(100) });
  });
});
