import { TranscriptError, describeValue } from "./errors.js";
import type { InputEvent } from "./event.js";

const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;
// A label must stay on the frame line and inside its brackets.
const UNSAFE_LABEL_CHAR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029[\]]/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function identifierAt(value: unknown, path: string): string {
  if (typeof value !== "string" || !IDENTIFIER.test(value)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_PEER_REQUEST",
      `${path} must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The older shape: `payload.peer_request = {id, session}`. */
function nestedPeerLabel(peer: unknown): string {
  if (!isRecord(peer)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_PEER_REQUEST",
      `payload.peer_request must be an object with id and session, got ${describeValue(peer)}`,
    );
  }
  const id = identifierAt(peer.id, "payload.peer_request.id");
  const session = identifierAt(peer.session, "payload.peer_request.session");
  return `peer request ${id} from ${session}`;
}

/**
 * The C13 shapes, flat in the payload: a request carries `request_id` and `from_session` (the
 * opener); a result carries `result_of` (the request it answers) and `from_session` (the peer).
 * Half an identity is refused rather than shown as an operator input.
 */
function flatPeerLabel(payload: Record<string, unknown>): string | null {
  if (present(payload.result_of)) {
    const id = identifierAt(payload.result_of, "payload.result_of");
    return `peer result ${id} from ${identifierAt(payload.from_session, "payload.from_session")}`;
  }
  if (present(payload.request_id) || present(payload.from_session)) {
    const id = identifierAt(payload.request_id, "payload.request_id");
    return `peer request ${id} from ${identifierAt(payload.from_session, "payload.from_session")}`;
  }
  return null;
}

/**
 * The label of an input frame: `peer request <id> from <session>` when the payload carries a
 * peer request identity (so the recipient can answer it), `peer result <id> from <session>` when
 * it carries the answer to one, otherwise the event's source. Sibling fields are never shown.
 */
export function inputLabel(event: InputEvent): string {
  const payload: unknown = isRecord(event) ? event.payload : undefined;
  if (isRecord(payload)) {
    if (present(payload.peer_request)) return nestedPeerLabel(payload.peer_request);
    const flat = flatPeerLabel(payload);
    if (flat !== null) return flat;
  }
  const source: unknown = isRecord(event) ? event.source : undefined;
  if (typeof source !== "string" || source.length === 0 || source.length > 128 || UNSAFE_LABEL_CHAR.test(source)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_LABEL",
      `event.source must be 1..128 characters with no control characters or brackets, got ${describeValue(source)}`,
    );
  }
  return source;
}
