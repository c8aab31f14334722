import { describe, expect, it } from "vitest";
import { merged } from "./merged.js";

/** Every own key (strings and symbols), with its descriptor, and the prototype: what tells two objects apart. */
function shape(o: object): unknown[] {
  return [Object.getPrototypeOf(o), ...Reflect.ownKeys(o).map((k) => [k, Object.getOwnPropertyDescriptor(o, k)])];
}

function expectSame(a: object, b: object): void {
  const fast = merged(a, b);
  const spread = { ...a, ...b };
  expect(shape(fast)).toEqual(shape(spread));
  expect(JSON.stringify(fast)).toBe(JSON.stringify(spread));
}

// A small deterministic generator (no dependency): the same objects every run.
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const KEYS = ["kind", "status", "output", "id", "startedAt", "usage", "source", "0", "7", "10", "error", "a b"];
const VALUES = [null, 0, -1, 2.5, "", "x", [], [{ stream: "result", text: "2" }], { n: 1 }, true, undefined];

function randomObject(next: () => number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const n = Math.floor(next() * 7);
  for (let i = 0; i < n; i++) o[KEYS[Math.floor(next() * KEYS.length)]!] = VALUES[Math.floor(next() * VALUES.length)];
  return o;
}

describe("merged", () => {
  it("builds what { ...a, ...b } builds for 5,000 random pairs (overlapping keys, integer-like keys, undefined values)", () => {
    const next = random(20261202);
    for (let i = 0; i < 5000; i++) expectSame(randomObject(next), randomObject(next));
  });

  it("builds the completion records of a cell as the spreads did", () => {
    const result = { kind: "cell", status: "ok", output: [{ stream: "result", text: "2" }], truncated_bytes: 0, error: null };
    const base = { id: "c-1", startedAt: 1, endedAt: 2, endedBy: "worker" };
    const completion = merged(result, { ...base, source: "worker" });
    expect(JSON.stringify(completion)).toBe(JSON.stringify({ ...result, ...base, source: "worker" }));
    expectSame(completion, { usage: { cpuMs: 1, peakRssBytes: null } });
    expect(completion.output).toBe(result.output); // shallow, as a spread is
  });

  it("copies symbols, skips non-enumerable properties and reads getters once, as a spread does", () => {
    const sym = Symbol("s");
    let reads = 0;
    const a = Object.defineProperties({ [sym]: 1, x: 1 } as Record<PropertyKey, unknown>, {
      hidden: { value: 2, enumerable: false },
      got: { get: () => ++reads, enumerable: true },
    });
    const fast = merged(a, { y: 2 });
    expect(reads).toBe(1);
    expect(Reflect.ownKeys(fast)).toEqual(["x", "got", "y", sym]);
    expect(Object.getOwnPropertyDescriptor(fast, "got")).toEqual({ value: 1, writable: true, enumerable: true, configurable: true });
    const constant = Object.defineProperties({ [sym]: 1, x: 1 } as Record<PropertyKey, unknown>, {
      hidden: { value: 2, enumerable: false },
      got: { get: () => 7, enumerable: true },
    });
    expectSame(constant, { y: 2 });
  });

  it("keeps an own __proto__ key as an own property (JSON.parse makes one), as a spread does", () => {
    const evil = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    for (const [a, b] of [[evil, { b: 2 }], [{ b: 2 }, evil]] as const) {
      const fast = merged(a, b) as Record<string, unknown>;
      expect(Object.getPrototypeOf(fast)).toBe(Object.prototype);
      expect(fast.polluted).toBeUndefined();
      expectSame(a, b);
    }
  });
});
