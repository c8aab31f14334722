import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { parseEnvelope } from "./parse.js";
import { isPlainObject } from "./rules.js";

describe("isPlainObject", () => {
  it("accepts object literals, null-prototype objects and objects from another realm", () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect(isPlainObject(runInNewContext("({ a: 1 })"))).toBe(true);
    expect(isPlainObject(JSON.parse('{"__proto__": 1}'))).toBe(true);
  });

  it("refuses arrays, null, primitives and non-plain objects", () => {
    class Thing {}
    for (const value of [[], null, undefined, 1, "x", new Map(), new Date(0), new Thing(), () => 1, runInNewContext("[]")]) {
      expect(isPlainObject(value)).toBe(false);
    }
  });

  it("makes a Map where the message belongs ENVELOPE_NOT_OBJECT", () => {
    const value = { version: 1, session_id: "s", generation: "g", message: new Map([["kind", "shutdown"]]) };
    expect(() => parseEnvelope(value)).toThrow(expect.objectContaining({ code: "ENVELOPE_NOT_OBJECT", path: "message" }));
  });
});
