import { UsageError, describeValue } from "./errors.js";

/** A JSON object (not null, not an array). */
export type JsonObject = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True when `key` is an own property of `obj` whose value is not null (a route said something). */
export function has(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key) && obj[key] !== undefined && obj[key] !== null;
}

/**
 * Reads a token count: absent or null means the route said nothing (undefined); otherwise it must
 * be a non-negative safe integer, and anything else is refused rather than coerced.
 */
export function readCount(obj: JsonObject, key: string, path: string): number | undefined {
  if (!has(obj, key)) return undefined;
  const value = obj[key];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new UsageError("USAGE_INVALID_FIELD", `${path}.${key} must be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

/** Reads a nested details object: absent or null is undefined; any other non-object is refused. */
export function readDetails(obj: JsonObject, key: string, path: string): JsonObject | undefined {
  if (!has(obj, key)) return undefined;
  const value = obj[key];
  if (!isObject(value)) {
    throw new UsageError("USAGE_INVALID_FIELD", `${path}.${key} must be an object, got ${describeValue(value)}`);
  }
  return value;
}
