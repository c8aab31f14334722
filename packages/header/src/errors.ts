/** Every stable error code this package raises; the Python worker raises the same strings. */
export const HEADER_ERROR_CODES = [
  "HEADER_INVALID_RECORD",
  "HEADER_INVALID_SOURCES",
  "HEADER_INVALID_ACTOR",
  "HEADER_INVALID_TIME",
  "HEADER_NO_PIN",
  "HEADER_BASE_MISMATCH",
  "HEADER_PATCH_INVALID",
  "HEADER_PATCH_MISMATCH",
  "HEADER_RESULT_MISMATCH",
  "HEADER_SOURCE_MISMATCH",
] as const;

/** One of the stable header error codes. */
export type HeaderErrorCode = (typeof HEADER_ERROR_CODES)[number];

/** The one error base class of @klbr/header: a stable `code` plus a message naming the offending value. */
export class HeaderError extends Error {
  /** Stable, language-neutral error code. */
  readonly code: HeaderErrorCode;

  constructor(code: HeaderErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "HeaderError";
    this.code = code;
  }
}

/** True when `value` is a HeaderError (by brand, so it also holds across two installed copies). */
export function isHeaderError(value: unknown): value is HeaderError {
  if (value instanceof HeaderError) return true;
  if (!(value instanceof Error) || value.name !== "HeaderError") return false;
  const code: unknown = (value as unknown as { code?: unknown }).code;
  return typeof code === "string" && (HEADER_ERROR_CODES as readonly string[]).includes(code);
}

/** Shorten a value for an error message so a huge text never floods a log. */
export function describe(value: unknown): string {
  let text: string;
  try {
    // Stryker disable next-line StringLiteral: JSON.stringify a string never yields undefined, so both branches give the same text
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
