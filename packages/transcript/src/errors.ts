/** Stable codes of every error this package raises. */
export type TranscriptErrorCode =
  | "TRANSCRIPT_INVALID_TIME"
  | "TRANSCRIPT_INVALID_DURATION"
  | "TRANSCRIPT_INVALID_EVENT"
  | "TRANSCRIPT_INVALID_LABEL"
  | "TRANSCRIPT_INVALID_PEER_REQUEST";

const BRAND = Symbol.for("@klbr/transcript/error");

/** The one error base class of @klbr/transcript; `code` is stable, the message names the value. */
export class TranscriptError extends Error {
  /** Stable string code, shared with the vectors in fixtures/transcript/. */
  readonly code: TranscriptErrorCode;
  readonly [BRAND] = true;

  constructor(code: TranscriptErrorCode, message: string) {
    super(message);
    this.name = "TranscriptError";
    this.code = code;
  }
}

/** True for a TranscriptError, even one thrown by a second installed copy of this package. */
export function isTranscriptError(value: unknown): value is TranscriptError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Renders a value for an error message without throwing on NaN, bigint or cycles. */
export function describeValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value === undefined) return "undefined";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
