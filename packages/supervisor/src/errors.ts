/** Stable codes a supervisor error may carry; the host keys its handling on them. */
export type SupervisorErrorCode =
  | "WORKER_HANDSHAKE_TIMEOUT"
  | "WORKER_BAD_TOKEN"
  | "WORKER_BAD_HELLO"
  | "WORKER_SOCKET_PATH_TOO_LONG"
  | "WORKER_DEAD"
  | "WORKER_BUSY"
  | "WORKER_PROTOCOL"
  | "WORKER_SPAWN_FAILED"
  | "WORKER_EXITED_EARLY"
  | "WORKER_WRONG_ROLE"
  | "WORKER_INVALID_ARGUMENT"
  | "LIMITS_UNAVAILABLE";

/** Codes for which starting a fresh worker (or retrying later) may help. */
const RETRYABLE: ReadonlySet<SupervisorErrorCode> = new Set<SupervisorErrorCode>([
  "WORKER_HANDSHAKE_TIMEOUT",
  "WORKER_DEAD",
  "WORKER_BUSY",
  "WORKER_PROTOCOL",
]);

/** Raw output tails of a worker, attached to errors about a worker that ran. */
export interface OutputTails {
  stdout: string;
  stderr: string;
}

/** The one error class of @klbr/supervisor: a stable `code` and whether a restart may help. */
export class SupervisorError extends Error {
  override readonly name = "SupervisorError";
  readonly code: SupervisorErrorCode;
  readonly retryable: boolean;
  readonly tails: OutputTails | undefined;

  constructor(code: SupervisorErrorCode, message: string, options: { cause?: unknown; tails?: OutputTails } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = RETRYABLE.has(code);
    this.tails = options.tails;
  }
}

/** True when `value` is a SupervisorError, also across two installed copies of the package. */
export function isSupervisorError(value: unknown): value is SupervisorError {
  return (
    value instanceof SupervisorError ||
    (value instanceof Error && value.name === "SupervisorError" && typeof (value as { code?: unknown }).code === "string")
  );
}
