/** The identity of a peer request, as a peer-originated input event's payload carries it. */
export interface PeerRequestIdentity {
  /** The request id the recipient answers with `peer.submit_result` (C2 identifier). */
  id: string;
  /** The session that sent the request (C2 identifier). */
  session: string;
  /** Sibling fields (evidence, ...) may be present; they are never shown. */
  [sibling: string]: unknown;
}

/**
 * What arrived, stored byte-exact; only `text` and the peer identity fields are read for framing.
 * A peer request carries `request_id` and `from_session` (C13), or the older nested
 * `peer_request`; a peer result carries `result_of` and `from_session`.
 */
export interface InputPayload {
  /** The sender's own words, exactly as they arrived. */
  text: string;
  /** Present when the input is a peer request (older shape); its sibling fields are never shown. */
  peer_request?: PeerRequestIdentity | null;
  /** C13: the id of the peer request this input is (answered with `peer.submit_result`). */
  request_id?: string | null;
  /** C13: the id of the peer request this input answers. */
  result_of?: string | null;
  /** C13: the session that sent the request (or, for a result, the peer that answered). */
  from_session?: string | null;
  /** Sibling fields may be present; they are never shown. */
  [sibling: string]: unknown;
}

/**
 * The durable input event a frame is derived from on every assembly. `received_at_ms` is the
 * host's receipt instant; null, non-finite, zero or negative means "no usable time".
 */
export interface InputEvent {
  /** Where the input came from (`operator`, `discord.dm`, ...); the frame's default label. */
  source: string;
  /** Receipt instant in ms since the epoch, or null when the record has none. */
  received_at_ms: number | null;
  /** What arrived. */
  payload: InputPayload;
}

/** The facts a tool-result line is derived from. */
export interface ResultFacts {
  /** The instant the observation was made, in ms since the epoch. */
  observed_at_ms: number | null;
  /** How long the cell ran; absent or null when no cell ran. */
  duration_ms?: number | null;
}
