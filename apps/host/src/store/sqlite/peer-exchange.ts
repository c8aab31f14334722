import { answerPeerRequest, cancelPeerRequest, openPeer, sendPeerRequest, stopPeer } from "../peer-exchange";
import type { PeerExchangeStore } from "../api/peer-exchange";
import type { SqliteContext } from "./context";

/** PeerExchangeStore over the synchronous SQLite transactions (under no one lease, as peers and peer requests are). */
export function sqlitePeerExchange(c: SqliteContext): PeerExchangeStore {
  return {
    openPeer: async (row, check) => openPeer(c.db, row, check),
    sendPeerRequest: async (send, rules) => sendPeerRequest(c.db, send, rules),
    answerPeerRequest: async (answer, rules) => answerPeerRequest(c.db, answer, rules),
    cancelPeerRequest: async (cancel, rules) => cancelPeerRequest(c.db, cancel, rules),
    stopPeer: async (id, stop, check) => stopPeer(c.db, id, stop, check),
  };
}
