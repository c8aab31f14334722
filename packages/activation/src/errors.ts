/** Every stable code an ActivationError carries; Python (`klbr.digest`, `klbr.manifest`) raises the same strings. */
export const ACTIVATION_ERROR_CODES = [
  // Source admission, in precedence order (see scan.ts): the first applicable code wins.
  "SOURCE_NOT_FOUND",
  "SOURCE_NOT_DIRECTORY",
  "SOURCE_BAD_NAME",
  "SOURCE_SYMLINK",
  "SOURCE_NOT_REGULAR",
  "SOURCE_CACHE",
  "SOURCE_EXTENSION",
  "SOURCE_EMPTY_DIRECTORY",
  "SOURCE_TOO_MANY_FILES",
  "SOURCE_TOO_LARGE",
  "SOURCE_DUPLICATE_NAME",
  // Manifest (C5).
  "MANIFEST_MISSING",
  "MANIFEST_INVALID_JSON",
  "MANIFEST_NOT_OBJECT",
  "MANIFEST_UNKNOWN_FIELD",
  "MANIFEST_MISSING_FIELD",
  "MANIFEST_BAD_VERSION",
  "MANIFEST_MISSING_SLOT",
  "MANIFEST_BAD_ENTRYPOINT",
  "MANIFEST_PACKAGE_MISMATCH",
  // Releases.
  "RELEASE_BAD_NAME",
  "RELEASE_DIGEST_MISMATCH",
  "RELEASE_CORRUPT",
  // The epoch store.
  "ACTIVATION_BAD_EPOCH",
  "ACTIVATION_EPOCH_CONFLICT",
  "ACTIVATION_HANDSHAKE_FAILED",
  "ACTIVATION_HANDSHAKE_TIMEOUT",
] as const;

/** One of the stable activation error codes. */
export type ActivationErrorCode = (typeof ACTIVATION_ERROR_CODES)[number];

/** Extra facts an ActivationError may carry: the path or manifest field it is about, and a cause. */
export interface ActivationErrorDetails {
  /** The offending path: relative to the source root for tree entries, as given for roots/releases. */
  path?: string;
  /** The offending manifest field, dotted from the top (e.g. `hooks.delivery.review`). */
  field?: string;
  /** The underlying error, kept as `cause`. */
  cause?: unknown;
}

// A brand instead of instanceof alone, so two installed copies of this package still recognise each other.
const BRAND = Symbol.for("@klbr/activation/ActivationError");

/** The one error class of @klbr/activation; `code` is stable, the message names the offending value. */
export class ActivationError extends Error {
  /** The stable code, e.g. SOURCE_SYMLINK. */
  readonly code: ActivationErrorCode;
  /** The offending path, when the error is about one. */
  readonly path: string | undefined;
  /** The offending manifest field, when the error is about one. */
  readonly field: string | undefined;

  constructor(code: ActivationErrorCode, message: string, details: ActivationErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ActivationError";
    this.code = code;
    this.path = details.path;
    this.field = details.field;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for an ActivationError, including one thrown by another installed copy of this package. */
export function isActivationError(value: unknown): value is ActivationError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
