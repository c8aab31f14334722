import { insertPeer, getPeer, peerOfSession, countLivePeers, peersOpenedBy, allPeers, stoppedPeerSessions, beginStop, finishStop, stoppingPeers, peerView } from "../peers";
import type { PeersStore } from "../api/peers";
import type { SqliteContext } from "./context";

/** PeersStore over the synchronous SQLite functions. */
export function sqlitePeers(c: SqliteContext): PeersStore {
  return {
    insertPeer: async (row) => insertPeer(c.db, row),
    getPeer: async (id) => getPeer(c.db, id),
    peerOfSession: async (sessionId) => peerOfSession(c.db, sessionId),
    countLivePeers: async () => countLivePeers(c.db),
    peersOpenedBy: async (openerSessionId) => peersOpenedBy(c.db, openerSessionId),
    allPeers: async () => allPeers(c.db),
    stoppedPeerSessions: async () => stoppedPeerSessions(c.db),
    beginStop: async (id, stop) => beginStop(c.db, id, stop),
    finishStop: async (id, stoppedBy, atMs) => finishStop(c.db, id, stoppedBy, atMs),
    stoppingPeers: async () => stoppingPeers(c.db),
    peerView: async (row) => peerView(c.db, row),
  };
}
