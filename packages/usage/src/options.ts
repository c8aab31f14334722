import { isObject } from "./count.js";
import { UsageError, describeValue } from "./errors.js";

/** Request options that only a route declaring support for them may carry. */
export const CACHE_OPTION_KEYS = ["prompt_cache_retention", "prompt_cache_options"] as const;

/** One of CACHE_OPTION_KEYS. */
export type CacheOptionKey = (typeof CACHE_OPTION_KEYS)[number];

/** The part of a route profile that declares which cache options the route accepts. */
export interface RouteCacheProfile {
  /** `true` keeps that option; anything missing or false strips it. */
  accepts?: { [K in CacheOptionKey]?: boolean };
}

/** The options with the cache keys made optional: they may have been stripped. */
export type StrippedOptions<T> = Omit<T, CacheOptionKey> & Partial<Pick<T, Extract<keyof T, CacheOptionKey>>>;

function accepted(profile: RouteCacheProfile | null | undefined): Set<CacheOptionKey> {
  const keep = new Set<CacheOptionKey>();
  if (profile === undefined || profile === null) return keep;
  if (!isObject(profile)) {
    throw new UsageError("USAGE_INVALID_OPTIONS", `a route profile must be an object, got ${describeValue(profile)}`);
  }
  const accepts: unknown = profile.accepts;
  if (accepts === undefined || accepts === null) return keep;
  if (!isObject(accepts)) {
    throw new UsageError("USAGE_INVALID_OPTIONS", `profile.accepts must be an object, got ${describeValue(accepts)}`);
  }
  for (const key of CACHE_OPTION_KEYS) {
    const value = accepts[key];
    if (value === undefined || value === false) continue;
    if (value !== true) {
      throw new UsageError("USAGE_INVALID_OPTIONS", `profile.accepts.${key} must be a boolean, got ${describeValue(value)}`);
    }
    keep.add(key);
  }
  return keep;
}

/**
 * Returns a new options object without `prompt_cache_retention` / `prompt_cache_options`, except
 * those the route profile declares it accepts. A shallow copy; the input is never mutated.
 */
export function stripCacheOptions<T extends object>(
  options: T,
  profile?: RouteCacheProfile | null,
): StrippedOptions<T> {
  if (!isObject(options)) {
    throw new UsageError("USAGE_INVALID_OPTIONS", `route options must be an object, got ${describeValue(options)}`);
  }
  const keep = accepted(profile);
  const entries = Object.entries(options).filter(
    ([key]) => !(CACHE_OPTION_KEYS as readonly string[]).includes(key) || keep.has(key as CacheOptionKey),
  );
  // fromEntries defines own data properties, so a "__proto__" key stays a key, not a prototype.
  return Object.fromEntries(entries) as StrippedOptions<T>;
}
