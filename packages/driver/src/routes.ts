import { DriverError, describeValue } from "./errors.js";

/** The wire API a route speaks. */
export type RouteApi = "chat" | "responses" | "anthropic";

/** How a route's model hands the host a cell: a `python` tool call, or a fenced block. */
export type CellsMode = "tool" | "fence";

/** One route as `<data>/routes.json` declares it (C10). The key itself is never here. */
export interface Route {
  name: string;
  api: RouteApi;
  base_url: string;
  model: string;
  /** The environment variable holding the key; null for a route that needs none (a local server). */
  api_key_env: string | null;
  context_tokens: number;
  cells: CellsMode;
  accepts: { prompt_cache_retention: boolean; prompt_cache_options: boolean };
  options: Record<string, unknown>;
  /** What the route charges, USD per million tokens (C23): only the counts it names are priced; absent, no cost is shown. */
  prices?: RoutePrices;
  /** C20: the model reads images; each displayed image goes as an image part of its result. Absent or false: never any image bytes. */
  images?: boolean;
}

/** A route's prices (C23 `"prices"`), USD per million tokens of each kind of count. */
export interface RoutePrices {
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
}

/** The kinds of count a route may price. */
export const PRICE_KEYS = ["input", "output", "cache_read", "cache_write"] as const;

/** The whole `routes.json` file. */
export interface RoutesFile {
  default: string | null;
  routes: Route[];
}

const APIS: readonly RouteApi[] = ["chat", "responses", "anthropic"];
const CELLS: readonly CellsMode[] = ["tool", "fence"];
const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ROUTE_KEYS = ["name", "api", "base_url", "model", "api_key_env", "context_tokens", "cells", "accepts", "options", "prices", "images"];
/** Request fields the driver writes itself: an option naming one would silently fight the assembly. */
export const RESERVED_OPTIONS = ["model", "messages", "input", "system", "tools", "tool_choice", "stream", "stream_options"] as const;

function fail(message: string): never {
  throw new DriverError("DRIVER_INVALID_ROUTES", message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Check one route object and return it as a plain Route (defaults: api_key_env null, cells "tool", accepts false, options {}). */
export function parseRoute(value: unknown, at = "route"): Route {
  if (!isObject(value)) fail(`${at} must be an object, got ${describeValue(value)}`);
  for (const key of Object.keys(value)) if (!ROUTE_KEYS.includes(key)) fail(`${at} has an unknown field ${JSON.stringify(key)}`);
  const { name, api, base_url, model, api_key_env, context_tokens } = value;
  if (typeof name !== "string" || !IDENTIFIER.test(name)) fail(`${at}.name must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${describeValue(name)}`);
  if (!APIS.includes(api as RouteApi)) fail(`${at}.api must be one of ${APIS.join(", ")}, got ${describeValue(api)}`);
  if (typeof base_url !== "string" || !/^https?:\/\/./.test(base_url)) fail(`${at}.base_url must be an http(s) URL, got ${describeValue(base_url)}`);
  if (typeof model !== "string" || model.length === 0) fail(`${at}.model must be a non-empty string, got ${describeValue(model)}`);
  // Absent reads as null: a local route (Ollama, vLLM) has no key.
  if (api_key_env !== null && api_key_env !== undefined && (typeof api_key_env !== "string" || !ENV_NAME.test(api_key_env))) {
    fail(`${at}.api_key_env must be an environment variable name or null, got ${describeValue(api_key_env)}`);
  }
  if (!Number.isSafeInteger(context_tokens) || (context_tokens as number) < 256) fail(`${at}.context_tokens must be an integer >= 256, got ${describeValue(context_tokens)}`);
  const cells = value.cells ?? "tool";
  if (!CELLS.includes(cells as CellsMode)) fail(`${at}.cells must be "tool" or "fence", got ${describeValue(cells)}`);
  const accepts = value.accepts ?? {};
  if (!isObject(accepts)) fail(`${at}.accepts must be an object, got ${describeValue(accepts)}`);
  for (const key of Object.keys(accepts)) {
    if (key !== "prompt_cache_retention" && key !== "prompt_cache_options") fail(`${at}.accepts has an unknown field ${JSON.stringify(key)}`);
    if (typeof accepts[key] !== "boolean") fail(`${at}.accepts.${key} must be a boolean, got ${describeValue(accepts[key])}`);
  }
  const options = value.options ?? {};
  if (!isObject(options)) fail(`${at}.options must be an object, got ${describeValue(options)}`);
  for (const key of RESERVED_OPTIONS) if (Object.hasOwn(options, key)) fail(`${at}.options may not set ${JSON.stringify(key)}: the driver writes it`);
  const prices = value.prices === undefined ? undefined : parsePrices(value.prices, `${at}.prices`);
  if (value.images !== undefined && typeof value.images !== "boolean") fail(`${at}.images must be a boolean, got ${describeValue(value.images)}`);
  return {
    name,
    api: api as RouteApi,
    base_url,
    model,
    api_key_env: (api_key_env as string | null) ?? null,
    context_tokens: context_tokens as number,
    cells: cells as CellsMode,
    accepts: { prompt_cache_retention: accepts.prompt_cache_retention === true, prompt_cache_options: accepts.prompt_cache_options === true },
    options: { ...options },
    ...(prices ? { prices } : {}),
    ...(value.images === true ? { images: true } : {}),
  };
}

/** `"prices"`: an object of PRICE_KEYS, each a finite number >= 0 (USD per million tokens), at least one. */
function parsePrices(value: unknown, at: string): RoutePrices {
  if (!isObject(value)) fail(`${at} must be an object of USD per million tokens, got ${describeValue(value)}`);
  const prices: RoutePrices = {};
  for (const [key, price] of Object.entries(value)) {
    if (!(PRICE_KEYS as readonly string[]).includes(key)) fail(`${at} has an unknown field ${JSON.stringify(key)} (prices are ${PRICE_KEYS.join(", ")})`);
    if (typeof price !== "number" || !Number.isFinite(price) || price < 0) fail(`${at}.${key} must be a number >= 0 (USD per million tokens), got ${describeValue(price)}`);
    prices[key as keyof RoutePrices] = price;
  }
  if (Object.keys(prices).length === 0) fail(`${at} must price at least one of ${PRICE_KEYS.join(", ")}`);
  return prices;
}

/**
 * Check a parsed `routes.json` (C10 amended): names unique, `default` names a declared route. A
 * `null` or unknown default is refused, never resolved to the first route; only a file with
 * exactly one route may leave `default` out (that route is the default).
 */
export function parseRoutes(value: unknown): RoutesFile {
  if (!isObject(value)) fail(`routes.json must hold an object, got ${describeValue(value)}`);
  for (const key of Object.keys(value)) if (key !== "default" && key !== "routes") fail(`routes.json has an unknown field ${JSON.stringify(key)}`);
  if (!Array.isArray(value.routes)) fail(`routes.json "routes" must be an array, got ${describeValue(value.routes)}`);
  const routes = value.routes.map((r, i) => parseRoute(r, `routes[${i}]`));
  const names = new Set<string>();
  for (const r of routes) {
    if (names.has(r.name)) fail(`route ${JSON.stringify(r.name)} is declared twice`);
    names.add(r.name);
  }
  const declared = routes.map((r) => r.name).join(", ") || "none";
  if (!Object.hasOwn(value, "default") || value.default === undefined) {
    if (routes.length !== 1) fail(`routes.json must name its "default" route when it declares ${routes.length} routes (routes: ${declared}); only a one-route file may leave it out`);
    return { default: routes[0]!.name, routes };
  }
  const def = routes.find((r) => r.name === value.default)?.name;
  if (def === undefined) fail(`routes.json "default" must name a declared route (routes: ${declared}), got ${describeValue(value.default)}`);
  return { default: def, routes };
}

/** One route by name; DRIVER_UNKNOWN_ROUTE names the routes there are. */
export function findRoute(file: RoutesFile, name: string): Route {
  const route = file.routes.find((r) => r.name === name);
  if (!route) throw new DriverError("DRIVER_UNKNOWN_ROUTE", `no route named ${JSON.stringify(name)} (routes: ${file.routes.map((r) => r.name).join(", ") || "none"})`);
  return route;
}

/**
 * The key of a route, read from its environment variable now (never stored). A route that names a
 * variable that is unset or empty is refused with DRIVER_KEY_UNSET naming the variable.
 */
export function routeKey(route: Route, env: NodeJS.ProcessEnv = process.env): string | null {
  if (route.api_key_env === null) return null;
  const key = env[route.api_key_env];
  if (key === undefined || key === "") {
    throw new DriverError("DRIVER_KEY_UNSET", `route ${JSON.stringify(route.name)} reads its key from $${route.api_key_env}, which is not set`);
  }
  return key;
}
