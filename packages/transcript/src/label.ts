import { TranscriptError, describeValue } from "./errors.js";
import type { InputEvent } from "./event.js";

const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;
// A label must stay on the frame line and inside its brackets.
const UNSAFE_LABEL_CHAR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029[\]]/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function peerLabel(peer: unknown): string {
  if (!isRecord(peer)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_PEER_REQUEST",
      `payload.peer_request must be an object with id and session, got ${describeValue(peer)}`,
    );
  }
  for (const key of ["id", "session"] as const) {
    const value = peer[key];
    if (typeof value !== "string" || !IDENTIFIER.test(value)) {
      throw new TranscriptError(
        "TRANSCRIPT_INVALID_PEER_REQUEST",
        `payload.peer_request.${key} must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${describeValue(value)}`,
      );
    }
  }
  return `peer request ${peer.id as string} from ${peer.session as string}`;
}

/**
 * The label of an input frame: `peer request <id> from <session>` when the payload carries a
 * peer request identity (so the recipient can answer it), otherwise the event's source.
 */
export function inputLabel(event: InputEvent): string {
  const payload: unknown = isRecord(event) ? event.payload : undefined;
  const peer = isRecord(payload) ? payload.peer_request : undefined;
  if (peer !== undefined && peer !== null) return peerLabel(peer);
  const source: unknown = isRecord(event) ? event.source : undefined;
  if (typeof source !== "string" || source.length === 0 || source.length > 128 || UNSAFE_LABEL_CHAR.test(source)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_LABEL",
      `event.source must be 1..128 characters with no control characters or brackets, got ${describeValue(source)}`,
    );
  }
  return source;
}
