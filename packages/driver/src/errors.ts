/** Stable codes of every error this package raises. */
export type DriverErrorCode =
  | "DRIVER_INVALID_ROUTES"
  | "DRIVER_UNKNOWN_ROUTE"
  | "DRIVER_KEY_UNSET"
  | "DRIVER_ROUTE_FAILED"
  | "DRIVER_MALFORMED_REPLY"
  | "DRIVER_INVALID_RECORD";

const BRAND = Symbol.for("@klbr/driver/error");

/** The one error base class of @klbr/driver; `code` is stable, the message names the value. */
export class DriverError extends Error {
  /** Stable string code. */
  readonly code: DriverErrorCode;
  /** For DRIVER_ROUTE_FAILED: the HTTP status the route answered last, when it answered. */
  readonly status: number | null;
  /** For DRIVER_ROUTE_FAILED: how many times the client retried before giving up. */
  readonly retries: number;
  readonly [BRAND] = true;

  constructor(code: DriverErrorCode, message: string, extra: { status?: number | null; retries?: number; cause?: unknown } = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "DriverError";
    this.code = code;
    this.status = extra.status ?? null;
    this.retries = extra.retries ?? 0;
  }
}

/** True for a DriverError, even one thrown by a second installed copy of this package. */
export function isDriverError(value: unknown): value is DriverError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Renders a value for an error message; long values are cut. */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    // JSON has no undefined, function or symbol: those (and only those) stringify to undefined.
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
