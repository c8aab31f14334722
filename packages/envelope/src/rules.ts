import * as v from "valibot";
import type { EnvelopeErrorCode } from "./error.js";
import { isDigest, isErrorCode, isIdentifier } from "./identifier.js";
import { fitsUtf8 } from "./text.js";

/**
 * What a failed rule means: the code it raises and what it expected. Issues carry the rule's
 * function as `requirement`, so mapping an issue to a code is an identity lookup, never a
 * reading of message text. Anything not registered here is ENVELOPE_INVALID_FIELD.
 */
export interface Rule {
  readonly code: EnvelopeErrorCode;
  readonly expected: string;
}

const RULES = new WeakMap<object, Rule>();

/** The rule a valibot `requirement` stands for, if it is one of ours. */
export function ruleOf(requirement: unknown): Rule | undefined {
  return typeof requirement === "function" ? RULES.get(requirement) : undefined;
}

/** Register `fn` as a rule with its code; returns `fn`. */
export function rule<F extends (value: never) => boolean>(code: EnvelopeErrorCode, expected: string, fn: F): F {
  RULES.set(fn, { code, expected });
  return fn;
}

/**
 * Plain JSON object: not null, not an array, not a Map/Date/class instance. Realm-agnostic: the
 * prototype is null or a prototype whose own prototype is null (Object.prototype of any realm).
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

const plainObject = rule("ENVELOPE_NOT_OBJECT", "an object", isPlainObject);

/** Any JSON object, opaque to this package (payloads, results). */
export const objectValue = v.pipe(v.unknown(), v.guard(plainObject));

/** A strict object that reports ENVELOPE_NOT_OBJECT for arrays and non-objects first. */
export function record<const E extends v.ObjectEntries>(entries: E) {
  return v.pipe(v.unknown(), v.guard(plainObject), v.strictObject(entries));
}

/** A variant that reports ENVELOPE_NOT_OBJECT for arrays and non-objects first. */
export function variantOf<const K extends string, const O extends v.VariantOptions<K>>(key: K, options: O) {
  return v.pipe(v.unknown(), v.guard(plainObject), v.variant(key, options));
}

/** An identifier (C2); a string outside the grammar is ENVELOPE_BAD_IDENTIFIER. */
export const identifier = v.pipe(
  v.string(),
  v.check<string>(rule("ENVELOPE_BAD_IDENTIFIER", "an identifier (1..128 of A-Z a-z 0-9 _ . -)", isIdentifier)),
);

/** A digest (C2): 64 lowercase hex characters. */
export const digest = v.pipe(v.string(), v.check<string>(rule("ENVELOPE_INVALID_FIELD", "a digest (64 lowercase hex)", isDigest)));

/** A snake_case host reply error code (C8). */
export const errorCode = v.pipe(
  v.string(),
  v.check<string>(rule("ENVELOPE_INVALID_FIELD", "a snake_case code ^[a-z][a-z0-9_]*$", isErrorCode)),
);

/** A string of at most `limit` UTF-8 bytes; more is ENVELOPE_LIMIT_EXCEEDED. */
export function boundedText(limit: number) {
  return v.pipe(
    v.string(),
    v.check(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${limit} UTF-8 bytes`, (text: string) => fitsUtf8(text, limit))),
  );
}

/** A string of 1..`limit` UTF-8 bytes: empty is ENVELOPE_INVALID_FIELD, more is ENVELOPE_LIMIT_EXCEEDED. */
export function nonEmptyText(limit: number) {
  return v.pipe(
    v.string(),
    v.check(rule("ENVELOPE_INVALID_FIELD", "a non-empty string", (text: string) => text.length > 0)),
    v.check(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${limit} UTF-8 bytes`, (text: string) => fitsUtf8(text, limit))),
  );
}

/** A safe integer in `min..max` (a JSON number with an integral value, such as 3 or 3.0). */
export function integer(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const label = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in ${min}..${max}`;
  return v.pipe(
    v.number(),
    v.check(rule("ENVELOPE_INVALID_FIELD", label, (n: number) => Number.isSafeInteger(n) && n >= min && n <= max)),
  );
}

/** A finite number in `(0, max]`. */
export function positiveUpTo(max: number) {
  return v.pipe(
    v.number(),
    v.check(rule("ENVELOPE_INVALID_FIELD", `a finite number in (0, ${max}]`, (n: number) => Number.isFinite(n) && n > 0 && n <= max)),
  );
}

/** An array of strings. */
export const stringArray = v.array(v.string());

/** An object whose values are all strings (an environment map). */
export const stringMap = v.pipe(
  v.unknown(),
  v.guard(plainObject),
  v.guard(
    rule("ENVELOPE_INVALID_FIELD", "an object of string values", (map: Record<string, unknown>): map is Record<string, string> =>
      Object.values(map).every((item) => typeof item === "string"),
    ),
  ),
);
