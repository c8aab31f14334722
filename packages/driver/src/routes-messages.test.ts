import { describe, expect, it } from "vitest";
import { findRoute, parseRoute, parseRoutes, RESERVED_OPTIONS, routeKey } from "./routes.js";

// Each routes.json refusal names the field, where it is, and the value it got (issue 25).
const base = { name: "r", api: "chat", base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null, context_tokens: 1000 };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return `${code}: ${message}`;
  }
  return "accepted";
}

describe("parseRoute refusals", () => {
  it.each([
    [null, "route must be an object, got null"],
    [[], "route must be an object, got []"],
    [{ ...base, name: "" }, 'route.name must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ""'],
    [{ ...base, name: "n".repeat(129) }, `route.name must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got "${"n".repeat(129)}"`],
    [{ ...base, api: "gemini" }, 'route.api must be one of chat, responses, anthropic, got "gemini"'],
    [{ ...base, base_url: "ftp://x" }, 'route.base_url must be an http(s) URL, got "ftp://x"'],
    [{ ...base, base_url: "http://" }, 'route.base_url must be an http(s) URL, got "http://"'],
    [{ ...base, base_url: 7 }, "route.base_url must be an http(s) URL, got 7"],
    [{ ...base, model: "" }, 'route.model must be a non-empty string, got ""'],
    [{ ...base, model: 3 }, "route.model must be a non-empty string, got 3"],
    [{ ...base, api_key_env: "1KEY" }, 'route.api_key_env must be an environment variable name or null, got "1KEY"'],
    [{ ...base, api_key_env: 5 }, "route.api_key_env must be an environment variable name or null, got 5"],
    [{ ...base, context_tokens: "4096" }, 'route.context_tokens must be an integer >= 256, got "4096"'],
    [{ ...base, context_tokens: 2 ** 53 }, `route.context_tokens must be an integer >= 256, got ${2 ** 53}`],
    [{ ...base, cells: "xml" }, 'route.cells must be "tool" or "fence", got "xml"'],
    [{ ...base, accepts: [] }, "route.accepts must be an object, got []"],
    [{ ...base, accepts: { cache: true } }, 'route.accepts has an unknown field "cache"'],
    [{ ...base, accepts: { prompt_cache_options: 1 } }, "route.accepts.prompt_cache_options must be a boolean, got 1"],
    [{ ...base, options: "x" }, 'route.options must be an object, got "x"'],
    [{ ...base, extra: 1 }, 'route has an unknown field "extra"'],
  ])("%j", (value, message) => {
    expect(refusal(() => parseRoute(value))).toBe(`DRIVER_INVALID_ROUTES: ${message}`);
  });

  it("refuses every option the driver writes itself", () => {
    expect(RESERVED_OPTIONS).toEqual(["model", "messages", "input", "system", "tools", "tool_choice", "stream", "stream_options"]);
    for (const key of RESERVED_OPTIONS) {
      expect(refusal(() => parseRoute({ ...base, options: { [key]: 1 } }))).toBe(`DRIVER_INVALID_ROUTES: route.options may not set "${key}": the driver writes it`);
    }
  });

  it("accepts the edges: a 128-character name, the identifier alphabet, an http URL, a one-letter key variable", () => {
    expect(parseRoute({ ...base, name: "n".repeat(128) }).name).toHaveLength(128);
    expect(parseRoute({ ...base, name: "A-z_0.9" }).name).toBe("A-z_0.9");
    expect(parseRoute({ ...base, base_url: "https://x" }).base_url).toBe("https://x");
    expect(parseRoute({ ...base, api_key_env: "_" }).api_key_env).toBe("_");
    expect(parseRoute({ ...base, api_key_env: "K_1" }).api_key_env).toBe("K_1");
    expect(parseRoute({ ...base, cells: "fence", api: "anthropic" })).toMatchObject({ cells: "fence", api: "anthropic" });
    expect(parseRoute({ ...base, api: "responses" }).api).toBe("responses");
  });

  it("keeps accepts as given and copies options", () => {
    const options = { temperature: 0.2 };
    const route = parseRoute({ ...base, accepts: { prompt_cache_retention: true, prompt_cache_options: false }, options });
    expect(route.accepts).toEqual({ prompt_cache_retention: true, prompt_cache_options: false });
    expect(parseRoute({ ...base, accepts: { prompt_cache_options: true } }).accepts).toEqual({ prompt_cache_retention: false, prompt_cache_options: true });
    expect(route.options).toEqual(options);
    expect(route.options).not.toBe(options);
  });

  it("names where in the file a route is wrong", () => {
    expect(refusal(() => parseRoutes({ routes: [base, { ...base, name: "s", model: "" }] }))).toBe('DRIVER_INVALID_ROUTES: routes[1].model must be a non-empty string, got ""');
  });
});

describe("parseRoutes refusals", () => {
  it.each([
    [null, "routes.json must hold an object, got null"],
    [{ routes: [], other: 1 }, 'routes.json has an unknown field "other"'],
    [{ routes: {} }, 'routes.json "routes" must be an array, got {}'],
    [{ default: "r" }, 'routes.json "routes" must be an array, got undefined'],
    [{ routes: [base, { ...base, name: "s" }, { ...base, name: "s" }], default: "r" }, 'route "s" is declared twice'],
    [{ default: "zz", routes: [] }, 'routes.json "default" must name a declared route (routes: none), got "zz"'],
    [{ routes: [] }, 'routes.json must name its "default" route when it declares 0 routes (routes: none); only a one-route file may leave it out'],
  ])("%j", (value, message) => {
    expect(refusal(() => parseRoutes(value))).toBe(`DRIVER_INVALID_ROUTES: ${message}`);
  });

  it("a default written as undefined reads as left out", () => {
    expect(parseRoutes({ default: undefined, routes: [base] }).default).toBe("r");
  });
});

describe("findRoute and routeKey", () => {
  it("names the routes there are, or none", () => {
    expect(refusal(() => findRoute({ default: null, routes: [] }, "x"))).toBe('DRIVER_UNKNOWN_ROUTE: no route named "x" (routes: none)');
    const file = parseRoutes({ default: "r", routes: [base, { ...base, name: "s" }] });
    expect(refusal(() => findRoute(file, "x"))).toBe('DRIVER_UNKNOWN_ROUTE: no route named "x" (routes: r, s)');
    expect(findRoute(file, "s").name).toBe("s");
  });

  it("names the route and its variable when the key is unset", () => {
    const route = parseRoute({ ...base, api_key_env: "KLBR_K" });
    expect(refusal(() => routeKey(route, {}))).toBe('DRIVER_KEY_UNSET: route "r" reads its key from $KLBR_K, which is not set');
    process.env.KLBR_ROUTE_TEST_KEY = "from-process";
    try {
      expect(routeKey(parseRoute({ ...base, api_key_env: "KLBR_ROUTE_TEST_KEY" }))).toBe("from-process");
    } finally {
      delete process.env.KLBR_ROUTE_TEST_KEY;
    }
  });
});
