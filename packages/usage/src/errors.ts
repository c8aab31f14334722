/** Stable codes of every error this package raises. */
export type UsageErrorCode =
  | "USAGE_INVALID_RESPONSE"
  | "USAGE_INVALID_CHUNK"
  | "USAGE_INVALID_FIELD"
  | "USAGE_UNKNOWN_PROVIDER"
  | "USAGE_UNKNOWN_SHAPE"
  | "USAGE_SHAPE_MISMATCH"
  | "USAGE_STREAM_FINISHED"
  | "USAGE_INVALID_OPTIONS";

const BRAND = Symbol.for("@klbr/usage/error");

/** The one error base class of @klbr/usage; `code` is stable, the message names the value. */
export class UsageError extends Error {
  /** Stable string code, shared with the vectors in fixtures/usage/. */
  readonly code: UsageErrorCode;
  readonly [BRAND] = true;

  constructor(code: UsageErrorCode, message: string) {
    super(message);
    this.name = "UsageError";
    this.code = code;
  }
}

/** True for a UsageError, even one thrown by a second installed copy of this package. */
export function isUsageError(value: unknown): value is UsageError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Renders a value for an error message without throwing on bigint or cycles; long values are cut. */
export function describeValue(value: unknown): string {
  let text: string;
  if (typeof value === "number" || typeof value === "bigint") text = String(value);
  else if (value === undefined) text = "undefined";
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
