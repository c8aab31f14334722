import type { peers } from "../../db/schema";
import type { PeerRow, PeerView } from "../peers";

/** Peers records (store/peers.ts). */
export interface PeersStore {
  /** Record a new open peer. */
  insertPeer(row: Omit<typeof peers.$inferInsert, "status">): Promise<PeerRow>;
  /** One peer by id. */
  getPeer(id: string): Promise<PeerRow | undefined>;
  /** The peer whose own session this is, if the session is a peer. */
  peerOfSession(sessionId: string): Promise<PeerRow | undefined>;
  /** How many peers hold a slot on this host (open or stopping). */
  countLivePeers(): Promise<number>;
  /** The peers a session opened, oldest first. */
  peersOpenedBy(openerSessionId: string): Promise<PeerRow[]>;
  /** Every peer of the host, oldest first (for `klbr status`). */
  allPeers(): Promise<PeerRow[]>;
  /** Sessions whose peer is stopped: no cell runs there again. */
  stoppedPeerSessions(): Promise<string[]>;
  /** Move an open peer to stopping or stopped; returns the row if it was open (null otherwise). */
  beginStop(id: string, stop: { drain: boolean; atMs: number }): Promise<PeerRow | undefined>;
  /** Close a stopping peer (its drain ended, or a restart found it cut short). */
  finishStop(id: string, stoppedBy: string, atMs: number): Promise<PeerRow | undefined>;
  /** Peers a crash left stopping. */
  stoppingPeers(): Promise<PeerRow[]>;
  /** A peer as peer.get shows it, with its requests counted by status. */
  peerView(row: PeerRow): Promise<PeerView>;
}
