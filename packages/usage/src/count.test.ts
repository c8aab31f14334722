import { describe, expect, it } from "vitest";
import { has, readCount, readDetails } from "./count.js";

describe("has", () => {
  it("is true only for an own property that is neither undefined nor null", () => {
    expect(has({ a: 0 }, "a")).toBe(true);
    expect(has({ a: undefined }, "a")).toBe(false);
    expect(has({ a: null }, "a")).toBe(false);
    expect(has(Object.create({ a: 1 }) as Record<string, unknown>, "a")).toBe(false);
    expect(has({}, "constructor")).toBe(false);
  });
});

describe("readCount / readDetails", () => {
  it("reads an explicitly undefined count as not sent", () => {
    expect(readCount({ prompt_tokens: undefined }, "prompt_tokens", "usage")).toBeUndefined();
  });

  it("names the path and value of a details field that is not an object", () => {
    expect(() => readDetails({ prompt_tokens_details: 5 }, "prompt_tokens_details", "usage")).toThrow(
      "usage.prompt_tokens_details must be an object, got 5",
    );
    expect(() => readDetails({ d: [1] }, "d", "usage")).toThrow("usage.d must be an object, got [1]");
  });
});
