import { and, asc, eq, or } from "drizzle-orm";
import { peerRequests } from "../../db/pg-schema";
import type { PeerRequestsStore } from "../api/peer-requests";
import type { OpenPeerRequest, PeerRequestRow } from "../peer-requests";
import type { PgContext } from "./context";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

/** PeerRequestsStore over PostgreSQL (a request names two sessions: written under no one lease, as in SQLite). */
export function pgPeerRequests(c: PgContext): PeerRequestsStore {
  const byId = (id: number) => eq(peerRequests.id, id);
  return {
    sentRequest: (fromSessionId, requestId) => c.read(async (db) => first<PeerRequestRow>(await db.select().from(peerRequests).where(and(eq(peerRequests.fromSessionId, fromSessionId), eq(peerRequests.requestId, requestId))))),
    receivedRequest: (toSessionId, requestId) =>
      c.read(async (db) => first<PeerRequestRow>(await db.select().from(peerRequests).where(and(eq(peerRequests.toSessionId, toSessionId), eq(peerRequests.requestId, requestId))).orderBy(asc(peerRequests.id)).limit(1))),
    peerRequestById: (id) => c.read(async (db) => first<PeerRequestRow>(await db.select().from(peerRequests).where(byId(id)))),
    insertPeerRequest: (row) => c.writeHost(async (tx) => first<PeerRequestRow>(await tx.insert(peerRequests).values({ ...row, status: "pending" }).returning())!),
    answerRequest: (id, a) =>
      c.writeHost(async (tx) =>
        first<PeerRequestRow>(await tx.update(peerRequests).set({ status: "answered", result: a.result, answeredByExecutionId: a.executionId, answeredAtMs: a.atMs }).where(and(byId(id), eq(peerRequests.status, "pending"))).returning()),
      ),
    cancelRequest: (id, x) =>
      c.writeHost(async (tx) =>
        first<PeerRequestRow>(await tx.update(peerRequests).set({ status: "cancelled", cancelledBy: x.by, cancelledByExecutionId: x.executionId, cancelledAtMs: x.atMs }).where(and(byId(id), eq(peerRequests.status, "pending"))).returning()),
      ),
    cancelPendingOfPeer: (peerId, x) =>
      c.writeHost(
        (tx) =>
          tx
            .update(peerRequests)
            .set({ status: "cancelled", cancelledBy: "stop", cancelledByExecutionId: x.executionId, cancelledAtMs: x.atMs })
            .where(and(eq(peerRequests.peerId, peerId), eq(peerRequests.status, "pending")))
            .returning() as Promise<PeerRequestRow[]>,
      ),
    setResultEvent: (id, eventId) => c.writeHost(async (tx) => void (await tx.update(peerRequests).set({ resultEventId: eventId }).where(byId(id)))),
    openPeerRequests: (sessionId) =>
      c.read(async (db) => {
        const rows = (await db
          .select()
          .from(peerRequests)
          .where(and(eq(peerRequests.status, "pending"), or(eq(peerRequests.fromSessionId, sessionId), eq(peerRequests.toSessionId, sessionId))))
          .orderBy(asc(peerRequests.id))) as PeerRequestRow[];
        const view = (r: PeerRequestRow): OpenPeerRequest => ({ request_id: r.requestId, peer_id: r.peerId, from_session: r.fromSessionId, to_session: r.toSessionId, content: r.content, event_id: r.eventId, sent_at_ms: r.sentAtMs });
        return { outgoing: rows.filter((r) => r.fromSessionId === sessionId).map(view), incoming: rows.filter((r) => r.toSessionId === sessionId).map(view) };
      }),
  };
}
