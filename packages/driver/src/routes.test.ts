import { describe, expect, it } from "vitest";
import { findRoute, parseRoutes, routeKey } from "./routes.js";

const base = { name: "local", api: "chat", base_url: "http://127.0.0.1:11434/v1", model: "qwen", api_key_env: null, context_tokens: 32768 };

describe("routes.json (C10)", () => {
  it("fills the defaults and takes the only route of a one-route file as default", () => {
    const file = parseRoutes({ routes: [base] });
    expect(file.default).toBe("local");
    expect(file.routes[0]).toEqual({ ...base, cells: "tool", accepts: { prompt_cache_retention: false, prompt_cache_options: false }, options: {} });
  });

  it("keeps a route's prices (C23), USD per million tokens, and leaves them out when not given", () => {
    const prices = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };
    expect(parseRoutes({ routes: [{ ...base, prices }] }).routes[0]!.prices).toEqual(prices);
    expect(parseRoutes({ routes: [{ ...base, prices: { output: 0 } }] }).routes[0]!.prices).toEqual({ output: 0 });
    expect(Object.hasOwn(parseRoutes({ routes: [base] }).routes[0]!, "prices")).toBe(false);
  });

  it("keeps the default the file names", () => {
    expect(parseRoutes({ default: "other", routes: [base, { ...base, name: "other" }] }).default).toBe("other");
  });

  it("reads an absent api_key_env as null (a local route has no key)", () => {
    const { api_key_env: _k, ...keyless } = base;
    expect(parseRoutes({ routes: [keyless] }).routes[0]!.api_key_env).toBeNull();
  });

  it.each([
    [{ routes: [{ ...base, api: "gemini" }] }, /api must be one of/],
    [{ routes: [{ ...base, name: "no spaces" }] }, /name must be an identifier/],
    [{ routes: [{ ...base, cells: "xml" }] }, /cells must be/],
    [{ routes: [{ ...base, extra: 1 }] }, /unknown field "extra"/],
    [{ routes: [{ ...base, options: { stream: false } }] }, /may not set "stream"/],
    [{ routes: [{ ...base, accepts: { prompt_cache_retention: "yes" } }] }, /must be a boolean/],
    [{ routes: [base, base] }, /declared twice/],
    [{ default: "other", routes: [base] }, /must name a declared route \(routes: local\), got "other"/],
    // C10 amended: null is refused, never resolved to the first route, however many routes there are.
    [{ default: null, routes: [base] }, /must name a declared route \(routes: local\), got null/],
    [{ default: null, routes: [base, { ...base, name: "other" }] }, /must name a declared route \(routes: local, other\), got null/],
    [{ default: 7, routes: [base] }, /must name a declared route/],
    // Only a one-route file may leave the default out.
    [{ routes: [base, { ...base, name: "other" }] }, /must name its "default" route when it declares 2 routes \(routes: local, other\)/],
    [{ routes: [] }, /declares 0 routes/],
    [{ routes: [{ ...base, api_key_env: "not-a-var" }] }, /api_key_env/],
    [{ routes: [{ ...base, context_tokens: 1.5 }] }, /context_tokens/],
    [{ routes: [{ ...base, prices: { input: "3" } }] }, /prices\.input must be a number >= 0/],
    [{ routes: [{ ...base, prices: { input: -1 } }] }, /prices\.input must be a number >= 0/],
    [{ routes: [{ ...base, prices: { reasoning: 1 } }] }, /prices has an unknown field "reasoning"/],
    [{ routes: [{ ...base, prices: {} }] }, /must price at least one/],
    [{ routes: [{ ...base, prices: [3, 15] }] }, /prices must be an object/],
  ])("refuses %j", (file, message) => {
    expect(() => parseRoutes(file)).toThrow(message);
    try {
      parseRoutes(file);
    } catch (error) {
      expect((error as { code: string }).code).toBe("DRIVER_INVALID_ROUTES");
    }
  });

  it("reads the key from the named variable and names an unset one", () => {
    const route = parseRoutes({ routes: [{ ...base, api_key_env: "KLBR_TEST_KEY" }] }).routes[0]!;
    expect(routeKey(route, { KLBR_TEST_KEY: "sk-1" })).toBe("sk-1");
    expect(() => routeKey(route, {})).toThrow(/\$KLBR_TEST_KEY, which is not set/);
    expect(() => routeKey(route, { KLBR_TEST_KEY: "" })).toThrow(expect.objectContaining({ code: "DRIVER_KEY_UNSET" }));
    expect(routeKey({ ...route, api_key_env: null }, {})).toBeNull();
  });

  it("finds a route by name or says which exist", () => {
    const file = parseRoutes({ routes: [base] });
    expect(findRoute(file, "local").model).toBe("qwen");
    expect(() => findRoute(file, "x")).toThrow(expect.objectContaining({ code: "DRIVER_UNKNOWN_ROUTE", message: expect.stringContaining("routes: local") }));
  });
});
