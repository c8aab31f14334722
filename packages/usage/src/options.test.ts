import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CACHE_OPTION_KEYS, stripCacheOptions } from "./options.js";
import { thrownCode } from "../test/vectors.js";

describe("stripCacheOptions", () => {
  it("never mutates, always copies, and only ever removes the two cache keys", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom("model", "temperature", ...CACHE_OPTION_KEYS, "prompt_cache_key"), fc.jsonValue()),
        fc.record({ prompt_cache_retention: fc.boolean(), prompt_cache_options: fc.boolean() }, { requiredKeys: [] }),
        (options, accepts) => {
          const before = JSON.stringify(options);
          const out = stripCacheOptions(options, { accepts }) as Record<string, unknown>;
          expect(JSON.stringify(options)).toBe(before);
          expect(out).not.toBe(options);
          for (const key of Object.keys(options)) {
            const cacheKey = (CACHE_OPTION_KEYS as readonly string[]).includes(key);
            const kept = !cacheKey || accepts[key as keyof typeof accepts] === true;
            expect(Object.hasOwn(out, key)).toBe(kept);
            if (kept) expect(out[key]).toBe(options[key]);
          }
          expect(Object.keys(out).every((key) => Object.hasOwn(options, key))).toBe(true);
        },
      ),
    );
  });

  it("keeps a __proto__ key as a plain key without touching the prototype", () => {
    const options = JSON.parse('{"__proto__": {"polluted": true}, "prompt_cache_retention": "24h"}') as object;
    const out = stripCacheOptions(options) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(Object.hasOwn(out, "prompt_cache_retention")).toBe(false);
  });

  it("names a malformed profile value", () => {
    expect(() => stripCacheOptions({}, { accepts: { prompt_cache_options: 1 as never } })).toThrow(
      "profile.accepts.prompt_cache_options must be a boolean, got 1",
    );
  });
});

describe("stripCacheOptions: refusals", () => {
  it("refuses a profile that is not an object, naming it", () => {
    expect(() => stripCacheOptions({}, 5 as never)).toThrow("a route profile must be an object, got 5");
    expect(thrownCode(() => stripCacheOptions({}, [] as never))).toBe("USAGE_INVALID_OPTIONS");
  });

  it("takes a null accepts as accepting nothing", () => {
    expect(stripCacheOptions({ prompt_cache_retention: "24h", model: "m" }, { accepts: null as never })).toStrictEqual({ model: "m" });
  });

  it("names a bad accepts object and bad options", () => {
    expect(() => stripCacheOptions({}, { accepts: "all" as never })).toThrow('profile.accepts must be an object, got "all"');
    expect(() => stripCacheOptions(null as never)).toThrow("route options must be an object, got null");
  });
});
