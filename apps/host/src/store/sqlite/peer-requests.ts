import { sentRequest, receivedRequest, peerRequestById, insertPeerRequest, answerRequest, cancelRequest, cancelPendingOfPeer, setResultEvent, openPeerRequests } from "../peer-requests";
import type { PeerRequestsStore } from "../api/peer-requests";
import type { SqliteContext } from "./context";

/** PeerRequestsStore over the synchronous SQLite functions. */
export function sqlitePeerRequests(c: SqliteContext): PeerRequestsStore {
  return {
    sentRequest: async (fromSessionId, requestId) => sentRequest(c.db, fromSessionId, requestId),
    receivedRequest: async (toSessionId, requestId) => receivedRequest(c.db, toSessionId, requestId),
    peerRequestById: async (id) => peerRequestById(c.db, id),
    insertPeerRequest: async (row) => insertPeerRequest(c.db, row),
    answerRequest: async (id, answer) => answerRequest(c.db, id, answer),
    cancelRequest: async (id, cancel) => cancelRequest(c.db, id, cancel),
    cancelPendingOfPeer: async (peerId, cancel) => cancelPendingOfPeer(c.db, peerId, cancel),
    setResultEvent: async (id, eventId) => setResultEvent(c.db, id, eventId),
    openPeerRequests: async (sessionId) => openPeerRequests(c.db, sessionId),
  };
}
