/** Every code an {@link EnvelopeError} may carry; Python's `klbr.envelope` raises the same strings. */
export const ENVELOPE_ERROR_CODES = [
  "ENVELOPE_NOT_OBJECT",
  "ENVELOPE_MISSING_FIELD",
  "ENVELOPE_UNKNOWN_FIELD",
  "ENVELOPE_INVALID_FIELD",
  "ENVELOPE_BAD_VERSION",
  "ENVELOPE_BAD_IDENTIFIER",
  "ENVELOPE_SESSION_MISMATCH",
  "ENVELOPE_GENERATION_MISMATCH",
  "ENVELOPE_UNKNOWN_KIND",
  "ENVELOPE_UNKNOWN_METHOD",
  "ENVELOPE_LIMIT_EXCEEDED",
  "ENVELOPE_ROLE_MISMATCH",
  // Connection state (C16 live output), raised by OutputSequence, never by a parse of one envelope.
  "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
  "ENVELOPE_OUTPUT_UNKNOWN_OPERATION",
  "ENVELOPE_OUTPUT_AFTER_COMPLETED",
  "ENVELOPE_OUTPUT_SEQUENCE",
  // C20 rich display: a bundle's keys and bytes (one message), then the connection state (DisplaySequence).
  "ENVELOPE_DISPLAY_MIME",
  "ENVELOPE_DISPLAY_ENCODING",
  "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
  "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
  "ENVELOPE_DISPLAY_AFTER_COMPLETED",
  "ENVELOPE_DISPLAY_SEQUENCE",
  "ENVELOPE_DISPLAY_DROPPED",
] as const;

/** A stable envelope error code. */
export type EnvelopeErrorCode = (typeof ENVELOPE_ERROR_CODES)[number];

const BRAND = Symbol.for("@klbr/envelope.EnvelopeError");

/** A decoded value that is not a valid envelope (or message part); `path` names the field. */
export class EnvelopeError extends Error {
  /** Stable code shared with Python. */
  readonly code: EnvelopeErrorCode;
  /** Dotted path of the offending field (`message.request.argv.0`); `""` is the value itself. */
  readonly path: string;
  /** The offending value (`undefined` for a missing field). */
  readonly value: unknown;

  constructor(code: EnvelopeErrorCode, path: string, value: unknown, expected: string) {
    super(`${code} at ${path === "" ? "<root>" : path}: expected ${expected}, got ${preview(value)}`);
    this.name = "EnvelopeError";
    this.code = code;
    this.path = path;
    this.value = value;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for an {@link EnvelopeError}, also one from another installed copy of this package. */
export function isEnvelopeError(value: unknown): value is EnvelopeError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

const PREVIEW_CHARS = 80;

/** A short, single-line rendering of an offending value for error messages. */
function preview(value: unknown): string {
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}... (${text.length} chars)` : text;
}
