import { describe, expect, it } from "vitest";
import { UsageError, describeValue, isUsageError } from "./errors.js";

describe("isUsageError", () => {
  it("recognises the brand of another installed copy, which shares the registered symbol", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("@klbr/usage/error")]: true });
    expect(isUsageError(foreign)).toBe(true);
    expect(isUsageError(new UsageError("USAGE_INVALID_FIELD", "m"))).toBe(true);
  });

  it("is false, without throwing, for null, primitives, and a branded non-object", () => {
    expect(isUsageError(null)).toBe(false);
    expect(isUsageError(undefined)).toBe(false);
    expect(isUsageError("USAGE_INVALID_FIELD")).toBe(false);
    const brandedFunction = Object.assign(() => undefined, { [Symbol.for("@klbr/usage/error")]: true });
    expect(isUsageError(brandedFunction)).toBe(false);
  });

  it("names the class in the error's name", () => {
    const error = new UsageError("USAGE_INVALID_FIELD", "m");
    expect(error.name).toBe("UsageError");
    expect(String(error)).toBe("UsageError: m");
  });
});

describe("describeValue", () => {
  it("renders numbers as JavaScript does, so NaN and Infinity are not shown as null", () => {
    expect(describeValue(NaN)).toBe("NaN");
    expect(describeValue(-Infinity)).toBe("-Infinity");
    expect(describeValue(12n)).toBe("12");
  });

  it("renders undefined, strings, objects and unserialisable values", () => {
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue("x")).toBe('"x"');
    expect(describeValue({ a: [1] })).toBe('{"a":[1]}');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(describeValue(cycle)).toBe("[object Object]");
    expect(describeValue(Symbol("s"))).toBe("Symbol(s)");
  });

  it("keeps a 200-character rendering whole and cuts a 201-character one to 200 and an ellipsis", () => {
    const exactly = "a".repeat(198); // JSON adds the two quotes: 200 characters
    expect(describeValue(exactly)).toBe(`"${exactly}"`);
    const over = "b".repeat(199); // 201 characters rendered
    expect(describeValue(over)).toBe(`"${over.slice(0, 199)}...`);
    expect(describeValue(over)).toHaveLength(203);
  });
});
