/** A host reply error: its snake_case `code` (C8) is what the cell's HostError carries. */
export class ReplyError extends Error {
  override readonly name = "ReplyError";
  constructor(
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Shorthand for an `invalid_request` reply naming the offending field. */
export function invalidRequest(message: string): ReplyError {
  return new ReplyError("invalid_request", message);
}
