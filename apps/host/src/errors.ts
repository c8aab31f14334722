/** Stable codes of host-level failures (CLI and daemon). */
export type HostErrorCode =
  | "HOST_ALREADY_RUNNING"
  | "HOST_NOT_RUNNING"
  | "HOST_STOPPING"
  | "CONTROL_SOCKET_PATH_TOO_LONG"
  | "CONTROL_PROTOCOL"
  | "CONTROL_REQUEST_FAILED"
  | "SESSION_STOPPED"
  | "LEASE_LOST"
  | "SESSION_NOT_HELD"
  | "SESSION_HELD_ELSEWHERE"
  | "STORE_NOT_SQLITE"
  | "CLI_USAGE"
  | "DATA_DIR_PERMISSIONS"
  | "DATABASE_CORRUPT"
  | "DATABASE_URL_INVALID"
  | "DATABASE_UNAVAILABLE"
  | "SANDBOX_INVALID"
  | "SANDBOX_DATA_IN_WORKSPACE"
  | "SANDBOX_UNAVAILABLE"
  | "DISPLAY_NOT_FOUND"
  | "DISPLAY_DIGEST_AMBIGUOUS"
  | "DISPLAY_WRITE_FAILED"
  | "RELEASE_NOT_FOUND";

/** A host or CLI failure with a stable code; the message names the offending value. */
export class HostError extends Error {
  override readonly name = "HostError";
  constructor(
    readonly code: HostErrorCode | string,
    message: string,
  ) {
    super(message);
  }
}
