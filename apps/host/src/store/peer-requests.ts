import { and, asc, eq, or } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { peerRequests } from "../db/schema";

/** One peer_requests row. */
export type PeerRequestRow = typeof peerRequests.$inferSelect;

/** A request by the session that sent it and its request id (unique per opener, C13). */
export function sentRequest(db: HostDb, fromSessionId: string, requestId: string): PeerRequestRow | undefined {
  return db
    .select()
    .from(peerRequests)
    .where(and(eq(peerRequests.fromSessionId, fromSessionId), eq(peerRequests.requestId, requestId)))
    .get();
}

/**
 * A request addressed to a session. A peer session has one opener, so its incoming request ids
 * are unique too; the oldest wins should a session ever receive from two.
 */
export function receivedRequest(db: HostDb, toSessionId: string, requestId: string): PeerRequestRow | undefined {
  return db
    .select()
    .from(peerRequests)
    .where(and(eq(peerRequests.toSessionId, toSessionId), eq(peerRequests.requestId, requestId)))
    .orderBy(asc(peerRequests.id))
    .get();
}

/** One request by row id. */
export function peerRequestById(db: HostDb, id: number): PeerRequestRow | undefined {
  return db.select().from(peerRequests).where(eq(peerRequests.id, id)).get();
}

/** Record a queued request. */
export function insertPeerRequest(db: HostDb, row: Omit<typeof peerRequests.$inferInsert, "status" | "id">): PeerRequestRow {
  return db.insert(peerRequests).values({ ...row, status: "pending" }).returning().get();
}

/** Answer a pending request; returns the row only if it was pending (answer once). */
export function answerRequest(
  db: HostDb,
  id: number,
  answer: { result: unknown; executionId: string; atMs: number },
): PeerRequestRow | undefined {
  return db
    .update(peerRequests)
    .set({ status: "answered", result: answer.result, answeredByExecutionId: answer.executionId, answeredAtMs: answer.atMs })
    .where(and(eq(peerRequests.id, id), eq(peerRequests.status, "pending")))
    .returning()
    .get();
}

/** Cancel a pending request; returns the row only if it was pending. */
export function cancelRequest(
  db: HostDb,
  id: number,
  cancel: { by: "opener" | "peer" | "stop"; executionId: string | null; atMs: number },
): PeerRequestRow | undefined {
  return db
    .update(peerRequests)
    .set({ status: "cancelled", cancelledBy: cancel.by, cancelledByExecutionId: cancel.executionId, cancelledAtMs: cancel.atMs })
    .where(and(eq(peerRequests.id, id), eq(peerRequests.status, "pending")))
    .returning()
    .get();
}

/** Cancel every pending request to a peer (it is stopping); returns the rows cancelled. */
export function cancelPendingOfPeer(db: HostDb, peerId: string, cancel: { executionId: string | null; atMs: number }): PeerRequestRow[] {
  return db
    .update(peerRequests)
    .set({ status: "cancelled", cancelledBy: "stop", cancelledByExecutionId: cancel.executionId, cancelledAtMs: cancel.atMs })
    .where(and(eq(peerRequests.peerId, peerId), eq(peerRequests.status, "pending")))
    .returning()
    .all();
}

/** Link the input event an answer (or a cancel by the peer) became in the opener's session. */
export function setResultEvent(db: HostDb, id: number, eventId: number): void {
  db.update(peerRequests).set({ resultEventId: eventId }).where(eq(peerRequests.id, id)).run();
}

/** One open peer request as a frontier block lists it. */
export interface OpenPeerRequest {
  request_id: string;
  peer_id: string;
  from_session: string;
  to_session: string;
  content: string;
  event_id: number;
  sent_at_ms: number;
}

/**
 * The peer requests still pending for a session, in both directions, oldest first: `outgoing`
 * (it sent them and awaits the answer) and `incoming` (it was asked and has not answered).
 */
export function openPeerRequests(db: HostDb, sessionId: string): { outgoing: OpenPeerRequest[]; incoming: OpenPeerRequest[] } {
  const rows = db
    .select()
    .from(peerRequests)
    .where(and(eq(peerRequests.status, "pending"), or(eq(peerRequests.fromSessionId, sessionId), eq(peerRequests.toSessionId, sessionId))))
    .orderBy(asc(peerRequests.id))
    .all();
  const view = (r: PeerRequestRow): OpenPeerRequest => ({
    request_id: r.requestId,
    peer_id: r.peerId,
    from_session: r.fromSessionId,
    to_session: r.toSessionId,
    content: r.content,
    event_id: r.eventId,
    sent_at_ms: r.sentAtMs,
  });
  return {
    outgoing: rows.filter((r) => r.fromSessionId === sessionId).map(view),
    incoming: rows.filter((r) => r.toSessionId === sessionId).map(view),
  };
}
