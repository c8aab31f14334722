import type * as v from "valibot";
import { EnvelopeError, type EnvelopeErrorCode } from "./error.js";
import { ruleOf } from "./rules.js";

/** Discriminator keys, and the code an unknown value of each raises. */
const DISCRIMINATORS: Record<string, EnvelopeErrorCode> = {
  kind: "ENVELOPE_UNKNOWN_KIND",
  action: "ENVELOPE_UNKNOWN_KIND",
  method: "ENVELOPE_UNKNOWN_METHOD",
  slot: "ENVELOPE_INVALID_FIELD",
};

/**
 * Turn the first valibot issue into an EnvelopeError. Decided by the issue's structure only
 * (kind, type, path, and the rule function it carries), never by its message text.
 */
export function toEnvelopeError(issue: v.BaseIssue<unknown>, prefix: readonly (string | number)[] = []): EnvelopeError {
  const items = issue.path ?? [];
  const keys = [...prefix, ...items.map((item) => item.key as string | number)];
  const path = keys.join(".");
  const last = items[items.length - 1];

  const objectIssue = issue.type === "strict_object" || issue.type === "loose_object";
  if (objectIssue && last !== undefined && last.origin === "key") {
    const present = Object.prototype.hasOwnProperty.call(last.input, last.key as PropertyKey);
    return present
      ? new EnvelopeError("ENVELOPE_UNKNOWN_FIELD", path, last.value, "no such field")
      : new EnvelopeError("ENVELOPE_MISSING_FIELD", path, undefined, "a value");
  }
  if (objectIssue) {
    return new EnvelopeError("ENVELOPE_NOT_OBJECT", path, issue.input, "an object");
  }
  if (issue.type === "variant" && last !== undefined) {
    const present = Object.prototype.hasOwnProperty.call(last.input, last.key as PropertyKey);
    if (!present) return new EnvelopeError("ENVELOPE_MISSING_FIELD", path, undefined, "a value");
    const code = DISCRIMINATORS[String(last.key)] ?? "ENVELOPE_INVALID_FIELD";
    const expected = code === "ENVELOPE_UNKNOWN_METHOD" ? "a host request method" : `one of ${issue.expected ?? "the known values"}`;
    return new EnvelopeError(code, path, last.value, expected);
  }
  // A forwarded rule (hello's role rules) carries its object as input; the path names the field.
  const value = last === undefined ? issue.input : last.value;
  const rule = ruleOf(issue.requirement);
  if (rule !== undefined) return new EnvelopeError(rule.code, path, value, rule.expected);
  return new EnvelopeError("ENVELOPE_INVALID_FIELD", path, value, issue.expected ?? "a valid value");
}
