import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        "CACHE_OPTION_KEYS",
        "PRICE_KINDS",
        "billedTokens",
        "costOf",
        "USAGE_COUNT_FIELDS",
        "USAGE_FLAGS",
        "USAGE_SHAPES",
        "UsageError",
        "createUsageStreamReader",
        "isUsageError",
        "readUsage",
        "readUsageStream",
        "stripCacheOptions",
      ].sort(),
    );
  });

  it("brands its errors with a stable code", () => {
    let caught: unknown;
    try {
      api.readUsage("not json");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(api.UsageError);
    expect(api.isUsageError(caught)).toBe(true);
    expect(api.isUsageError(new Error("x"))).toBe(false);
    expect((caught as api.UsageError).code).toBe("USAGE_INVALID_RESPONSE");
    expect((caught as Error).message).toContain('"not json"');
  });
});
