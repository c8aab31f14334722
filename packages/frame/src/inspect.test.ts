import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { MAX_DEPTH, MAX_SAFE_INTEGER } from "./constants";
import { inspectParsed, keysAccountedFor } from "./inspect";

const nest = (depth: number, kind: "array" | "object", leaf: unknown = 0): unknown => {
  let out = leaf;
  for (let i = 0; i < depth; i++) out = kind === "array" ? [out] : { k: out };
  return out;
};

// Each walk runs twice: once as it runs normally (for-in), once with an enumerable property on
// Object.prototype, which makes it take own keys only.
function polluted<T>(fn: () => T): T {
  const proto = Object.prototype as Record<string, unknown>;
  proto.polluted = 1;
  try {
    return fn();
  } finally {
    delete proto.polluted;
  }
}

describe.each([
  ["inspectParsed", (value: unknown, strings?: boolean) => inspectParsed(value, strings)],
  ["inspectParsed, prototype polluted", (value: unknown, strings?: boolean) => polluted(() => inspectParsed(value, strings))],
] as const)("%s", (_name, inspect) => {
  it("counts own keys over every object, and none for arrays or scalars", () => {
    expect(inspect({ a: 1, b: { c: [{ d: "x" }, 2] } })).toMatchObject({ keys: 4, clean: true });
    expect(inspect([1, "a", null, true, [{}]])).toMatchObject({ keys: 0, clean: true });
    expect(inspect("abc")).toMatchObject({ keys: 0, clean: true });
    expect(inspect(null)).toMatchObject({ keys: 0, clean: true });
  });

  it("flags a number beyond ±(2^53 - 1) or non-finite, anywhere, and nothing at the limit", () => {
    for (const n of [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 0.5, 1e-300]) {
      expect(inspect(n).clean, String(n)).toBe(true);
      expect(inspect([n]).clean).toBe(true);
      expect(inspect({ a: [{ b: n }] }).clean).toBe(true);
    }
    for (const n of [MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN]) {
      expect(inspect(n).clean, String(n)).toBe(false);
      expect(inspect([1, n]).clean).toBe(false);
      expect(inspect({ a: 1, b: { c: n } }).clean).toBe(false);
    }
  });

  it("flags a lone surrogate in a string or a key, unless told the text holds no \\u", () => {
    for (const value of ["\ud800", ["ok", "\udc00"], { a: "\ud800x" }, { "\udc00": 1 }, { a: { ["x\ud800"]: 1 } }]) {
      expect(inspect(value).clean).toBe(false);
      expect(inspect(value, true).clean).toBe(false);
      expect(inspect(value, false).clean).toBe(true);
    }
    expect(inspect(["\ud83d\ude00", { "\ud83d\ude00": "é" }]).clean).toBe(true);
  });

  it("flags nesting past MAX_DEPTH and nothing at it, for arrays and objects", () => {
    for (const kind of ["array", "object"] as const) {
      expect(inspect(nest(MAX_DEPTH, kind)).clean, kind).toBe(true);
      expect(inspect(nest(MAX_DEPTH + 1, kind)).clean, kind).toBe(false);
      expect(inspect([1, nest(MAX_DEPTH, kind)]).clean, kind).toBe(false);
    }
  });

  it("starts every walk afresh", () => {
    expect(inspect([Number.POSITIVE_INFINITY, { a: 1 }])).toMatchObject({ keys: 1, clean: false });
    expect(inspect({ b: 2 })).toMatchObject({ keys: 1, clean: true });
    inspect(["\ud800"], true);
    expect(inspect(["\ud800"], false).clean).toBe(true);
  });
});

describe("inspectParsed", () => {
  it("ignores inherited enumerable properties once the prototype is polluted", () => {
    expect(polluted(() => inspectParsed({ a: 1, b: [{ c: 2 }] }))).toMatchObject({ keys: 3, clean: true });
    expect(polluted(() => inspectParsed([{ a: 2 ** 60 }])).clean).toBe(false);
  });
});

describe.each([
  ["text", (text: string) => text],
  ["UTF-8 bytes", (text: string) => Buffer.from(text)],
] as const)("keysAccountedFor on %s", (_name, as) => {
  const check = (text: string, keys?: number, escapes?: boolean) => {
    const value = JSON.parse(text) as unknown;
    return keysAccountedFor(as(text), value, keys ?? inspectParsed(value).keys, escapes);
  };

  it("accepts text whose every colon is a parsed key", () => {
    expect(check('{"a":1,"b":{"c":[{"d":2}]}}')).toBe(true);
    expect(check("[1,2]")).toBe(true);
  });

  it("subtracts raw colons inside strings and keys", () => {
    expect(check('{"a":"x:y","b::":[":",{"c":"::"}]}')).toBe(true);
    expect(check('[":", "a:b:c"]')).toBe(true);
    expect(check('{"a":"x:y","b::":[":",{"c":"::"}]}', undefined, false)).toBe(true);
  });

  it("refuses a duplicate, also one hidden among colons in strings", () => {
    expect(check('{"a":1,"a":2}')).toBe(false);
    expect(check('{"a":"x:y","a":"x:y"}')).toBe(false);
    expect(check('{"a":{"b":":","b":":"}}')).toBe(false);
  });

  it("refuses a text that may spell a colon as \\u003a: counting would let a duplicate through", () => {
    // Three colons, two parsed keys, one colon in the parsed strings: the count balances, yet "a" repeats.
    expect(check('{"a":1,"a":2,"b":"\\u003a"}')).toBe(false);
    expect(check('{"a":1,"a":2,"b":"\\u003A"}')).toBe(false);
    expect(check('{"a":1,"a":2,"b":"\\u003a"}', undefined, true)).toBe(false);
    expect(check('{"a":"\\u003a"}')).toBe(true);
    expect(check('{"a":"\\u0041","b":":"}')).toBe(true);
  });

  it("compares with the key count it is given", () => {
    expect(check('{"a":1,"b":2}', 2)).toBe(true);
    expect(check('{"a":1,"b":2}', 1)).toBe(false);
  });
});
