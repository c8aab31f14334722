import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CACHE_OPTION_KEYS, stripCacheOptions } from "./options.js";

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
