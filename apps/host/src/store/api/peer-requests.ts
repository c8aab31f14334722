import type { peerRequests } from "../../db/schema";
import type { PeerRequestRow, OpenPeerRequest } from "../peer-requests";

/** PeerRequests records (store/peer-requests.ts). */
export interface PeerRequestsStore {
  /** A request by the session that sent it and its request id (unique per opener, C13). */
  sentRequest(fromSessionId: string, requestId: string): Promise<PeerRequestRow | undefined>;
  /**
   * A request addressed to a session. A peer session has one opener, so its incoming request ids
   * are unique too; the oldest wins should a session ever receive from two.
   */
  receivedRequest(toSessionId: string, requestId: string): Promise<PeerRequestRow | undefined>;
  /** One request by row id. */
  peerRequestById(id: number): Promise<PeerRequestRow | undefined>;
  /** Record a queued request. */
  insertPeerRequest(row: Omit<typeof peerRequests.$inferInsert, "status" | "id">): Promise<PeerRequestRow>;
  /** Answer a pending request; returns the row only if it was pending (answer once). */
  answerRequest(id: number, answer: { result: unknown; executionId: string; atMs: number }): Promise<PeerRequestRow | undefined>;
  /** Cancel a pending request; returns the row only if it was pending. */
  cancelRequest(id: number, cancel: { by: "opener" | "peer" | "stop"; executionId: string | null; atMs: number }): Promise<PeerRequestRow | undefined>;
  /** Cancel every pending request to a peer (it is stopping); returns the rows cancelled. */
  cancelPendingOfPeer(peerId: string, cancel: { executionId: string | null; atMs: number }): Promise<PeerRequestRow[]>;
  /** Link the input event an answer (or a cancel by the peer) became in the opener's session. */
  setResultEvent(id: number, eventId: number): Promise<void>;
  /**
   * The peer requests still pending for a session, in both directions, oldest first: `outgoing`
   * (it sent them and awaits the answer) and `incoming` (it was asked and has not answered).
   */
  openPeerRequests(sessionId: string): Promise<{ outgoing: OpenPeerRequest[]; incoming: OpenPeerRequest[] }>;
}
