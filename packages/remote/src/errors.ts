/** Stable codes of every error @klbr/remote raises. */
export type RemoteErrorCode =
  | "REMOTE_TARGETS_INVALID"
  | "REMOTE_TARGET_INVALID"
  | "REMOTE_TARGET_NOT_FOUND"
  | "REMOTE_TARGET_EXISTS"
  | "REMOTE_HOST_KEY_MISMATCH"
  | "REMOTE_AUTH_FAILED"
  | "REMOTE_CONNECT_FAILED"
  | "REMOTE_FORWARD_REFUSED"
  | "REMOTE_PYTHON_MISSING"
  | "REMOTE_PYTHON_TOO_OLD"
  | "REMOTE_INSTALL_FAILED"
  | "REMOTE_RUNTIME_INVALID"
  | "REMOTE_RUNTIME_ABSENT"
  | "REMOTE_START_FAILED";

const BRAND = Symbol.for("@klbr/remote/error");

/** The one error class of @klbr/remote: a stable `code`; the message names the target and what ssh said. */
export class RemoteError extends Error {
  override readonly name = "RemoteError";
  readonly code: RemoteErrorCode;
  readonly [BRAND] = true;

  constructor(code: RemoteErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** True for a RemoteError, even one thrown by a second installed copy of this package. */
export function isRemoteError(value: unknown): value is RemoteError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
