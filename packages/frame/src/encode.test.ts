import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { decodePayload } from "./decode";
import { MAX_FRAME_BYTES } from "./constants";
import { encodeFrame, encodePayload } from "./encode";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function refused(value: unknown, code = "FRAME_UNENCODABLE", message?: RegExp) {
  for (const encode of [encodePayload, encodeFrame]) {
    let thrown: unknown;
    try {
      encode(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code });
    if (message) expect((thrown as Error).message).toMatch(message);
  }
}

describe("encodePayload refuses what JSON.stringify would drop or change", () => {
  it("undefined anywhere", () => {
    refused(undefined, "FRAME_UNENCODABLE", /undefined at the top level/);
    refused({ a: undefined }, "FRAME_UNENCODABLE", /at \.a/);
    refused([1, undefined]);
  });

  it("a hole in an array (JSON.stringify would write null)", () => {
    refused([1, , 3], "FRAME_UNENCODABLE", /\[1\]/);
  });

  it("BigInt, functions and symbols", () => {
    refused(10n, "FRAME_UNENCODABLE", /BigInt 10n/);
    refused({ f() {} }, "FRAME_UNENCODABLE", /a function at \.f/);
    refused([Symbol("s")], "FRAME_UNENCODABLE", /symbol Symbol\(s\)/);
  });

  it("non-finite numbers", () => {
    refused(Number.NaN, "FRAME_UNENCODABLE", /NaN/);
    refused({ x: [Number.POSITIVE_INFINITY] }, "FRAME_UNENCODABLE", /Infinity at \.x\[0\]/);
  });

  it("integral numbers JSON.stringify writes as integer literals beyond 2^53 - 1", () => {
    refused(2 ** 53, "FRAME_UNENCODABLE", /9007199254740992/);
    refused(-1e20);
    refused(9.99e20);
  });

  it("accepts large floats JSON.stringify writes in exponent form, and they round-trip", () => {
    for (const value of [1e21, -1e21, 1.7976931348623157e308, 2.5e300]) {
      const payload = encodePayload(value);
      expect(text(payload)).toMatch(/e\+/);
      expect(decodePayload(payload)).toBe(value);
    }
  });

  it("writes -0 as 0", () => {
    expect(text(encodePayload([-0]))).toBe("[0]");
  });

  it("non-plain objects: Date, Map, Set, RegExp, typed arrays, class instances, Array subclasses, boxed values", () => {
    class Point {
      x = 1;
    }
    class List extends Array {}
    for (const value of [new Date(0), new Map(), new Set(), /x/, new Uint8Array(1), new Point(), List.from([1]), Object(1), Object("s")]) {
      refused(value, "FRAME_UNENCODABLE", /non-plain object/);
    }
    refused({ when: new Date(0) }, "FRAME_UNENCODABLE", /Date\) at \.when/);
  });

  it("a toJSON method (a function value)", () => {
    refused({ toJSON: () => 1 });
  });

  it("a toJSON method JSON.stringify would call but the walk does not see (on an array, or not enumerable)", () => {
    const list = Object.assign([1, 2], { toJSON: () => "swapped" });
    refused(list, "FRAME_UNENCODABLE", /toJSON method at the top level/);
    const hidden = Object.defineProperty({ a: 1 }, "toJSON", { value: () => "swapped", enumerable: false });
    refused({ x: [hidden] }, "FRAME_UNENCODABLE", /toJSON method at \.x\[0\]/);
  });

  it("symbol-keyed properties (JSON.stringify would drop them)", () => {
    refused({ a: 1, [Symbol("hidden")]: 2 }, "FRAME_UNENCODABLE", /symbol keys/);
  });

  it("cycles through objects and arrays", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    refused(a, "FRAME_UNENCODABLE", /a cycle at \.self/);
    const list: unknown[] = [];
    list.push([list]);
    refused(list, "FRAME_UNENCODABLE", /cycle/);
  });

  it("lone surrogates in strings and keys, but not pairs", () => {
    refused("\ud800", "FRAME_UNENCODABLE", /lone surrogate/);
    refused({ ["\udc00"]: 1 }, "FRAME_UNENCODABLE", /key with a lone surrogate/);
    expect(text(encodePayload("\ud83d\ude00"))).toBe('"😀"');
  });

  it("accepts null-prototype objects, objects from another realm, and an own __proto__ key", () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.a = 1;
    expect(text(encodePayload(bare))).toBe('{"a":1}');
    const foreign = runInNewContext('({ a: [1, { b: "c" }] })') as unknown;
    expect(text(encodePayload(foreign))).toBe('{"a":[1,{"b":"c"}]}');
    const proto = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    expect(text(encodePayload(proto))).toBe('{"__proto__":{"x":1}}');
  });

  it("writes a shared (acyclic) sub-tree each time it occurs", () => {
    const shared = { a: 1 };
    expect(text(encodePayload([shared, shared]))).toBe('[{"a":1},{"a":1}]');
  });

  it("stops walking a shared sub-tree that would explode past 1 MiB with FRAME_TOO_LARGE", () => {
    let value: unknown = 0;
    for (let i = 0; i < 40; i++) value = [value, value];
    refused(value, "FRAME_TOO_LARGE", /nodes/);
  });

  it("counts nodes up to exactly 2^20 and stops the walk at the next one", () => {
    // 2^20 nodes (the array and 2^20 - 1 zeros) pass the walk; the serialized size then decides.
    refused(new Array<number>(MAX_FRAME_BYTES - 1).fill(0), "FRAME_TOO_LARGE", /^payload of 2097151 bytes exceeds 1048576 bytes$/);
    refused(new Array<number>(MAX_FRAME_BYTES).fill(0), "FRAME_TOO_LARGE", /^value has more than 1048576 nodes, so it cannot fit a frame$/);
  });

  it("refuses strings that cannot fit before serializing them", () => {
    refused(["x".repeat(700_000), { ["k".repeat(400_000)]: 1 }], "FRAME_TOO_LARGE", /at least 1100000 bytes/);
  });

  it("refuses depth 129 with FRAME_TOO_DEEP, naming where", () => {
    let value: unknown = 0;
    for (let i = 0; i < 129; i++) value = { k: value };
    refused(value, "FRAME_TOO_DEEP", /\.k\.k/);
  });
});

describe("encodeFrame", () => {
  it("prefixes the payload with its big-endian length", () => {
    const frame = encodeFrame({ kind: "shutdown" });
    expect(Array.from(frame.subarray(0, 4))).toEqual([0, 0, 0, 19]);
    expect(text(frame.subarray(4))).toBe('{"kind":"shutdown"}');
  });

  it("counts UTF-8 bytes, not UTF-16 units", () => {
    const frame = encodeFrame("😀é");
    expect(new DataView(frame.buffer).getUint32(0)).toBe(8);
    expect(frame.length).toBe(12);
  });
});

describe("encodePayload names what it refuses", () => {
  it("a non-plain object without a usable constructor name is of an unknown prototype", () => {
    refused(Object.setPrototypeOf([1], null), "FRAME_UNENCODABLE", /non-plain object \(unknown prototype\) at the top level/);
    refused([Object.create(Object.create(Object.create(null)))], "FRAME_UNENCODABLE", /\(unknown prototype\) at \[0\]/);
    refused(Object.create({ constructor: { name: 42 } }), "FRAME_UNENCODABLE", /\(unknown prototype\)/);
    const Anonymous = [class {}][0]!;
    refused(new Anonymous(), "FRAME_UNENCODABLE", /\(unknown prototype\)/);
  });

  it("an object whose root prototype is not an Object.prototype (it has its own string tag)", () => {
    const root = Object.defineProperty(Object.create(null), Symbol.toStringTag, { value: "Thing" }) as object;
    refused(Object.create(root), "FRAME_UNENCODABLE", /non-plain object/);
  });

  it("a plain object with its own string tag by its symbol key, not as non-plain (its prototype is Object.prototype)", () => {
    refused({ [Symbol.toStringTag]: "Thing" }, "FRAME_UNENCODABLE", /^cannot encode an object with symbol keys at the top level$/);
  });

  it("the exact size of a string just past 1 MiB once serialized, and accepts one that fits exactly", () => {
    expect(encodePayload("x".repeat(MAX_FRAME_BYTES - 2))).toHaveLength(MAX_FRAME_BYTES);
    refused("x".repeat(MAX_FRAME_BYTES - 1), "FRAME_TOO_LARGE", /^payload of 1048577 bytes exceeds 1048576 bytes$/);
    // Its characters alone are 1 MiB: not more than the limit, so the exact count decides.
    refused("x".repeat(MAX_FRAME_BYTES), "FRAME_TOO_LARGE", /^payload of 1048578 bytes exceeds 1048576 bytes$/);
  });
});
