/**
 * Every stable code a FrameError carries; Python (`klbr.frame`) raises the same strings.
 * For a decoder the order below the header codes is also the precedence when one payload
 * breaks several rules at once (see README "Precedence").
 */
export const FRAME_ERROR_CODES = [
  "FRAME_EMPTY",
  "FRAME_TOO_LARGE",
  "FRAME_TRUNCATED",
  "FRAME_INVALID_UTF8",
  "FRAME_BOM",
  "FRAME_TOO_DEEP",
  "FRAME_INVALID_JSON",
  "FRAME_LONE_SURROGATE",
  "FRAME_NON_FINITE",
  "FRAME_UNSAFE_INTEGER",
  "FRAME_DUPLICATE_KEY",
  "FRAME_UNENCODABLE",
  "FRAME_POISONED",
] as const;

/** One of the stable frame error codes. */
export type FrameErrorCode = (typeof FRAME_ERROR_CODES)[number];

// A brand instead of instanceof alone, so two installed copies of this package still recognise each other.
const BRAND = Symbol.for("@klbr/frame/FrameError");

/** The one error class of @klbr/frame; `code` is stable, the message names the offending value. */
export class FrameError extends Error {
  /** The stable code, e.g. FRAME_TOO_LARGE. */
  readonly code: FrameErrorCode;
  /**
   * Values of whole frames that `FrameDecoder.push` decoded from the same chunk before the
   * failing frame (empty elsewhere), so no valid value is lost and chunking never changes
   * what a reader sees before the error.
   */
  values: unknown[];

  constructor(code: FrameErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FrameError";
    this.code = code;
    this.values = [];
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a FrameError, including one thrown by another installed copy of this package. */
export function isFrameError(value: unknown): value is FrameError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
