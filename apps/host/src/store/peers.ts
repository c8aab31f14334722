import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { peerRequests, peers } from "../db/schema";

/** One peers row. */
export type PeerRow = typeof peers.$inferSelect;
/** A peer's lifecycle status (C13). */
export type PeerStatus = PeerRow["status"];

/** Statuses that hold one of the host's open-peer slots: a stopping peer still runs. */
const LIVE: PeerStatus[] = ["open", "stopping"];

/** Record a new open peer. */
export function insertPeer(db: HostDb, row: Omit<typeof peers.$inferInsert, "status">): PeerRow {
  return db.insert(peers).values({ ...row, status: "open" }).returning().get();
}

/** One peer by id. */
export function getPeer(db: HostDb, id: string): PeerRow | undefined {
  return db.select().from(peers).where(eq(peers.id, id)).get();
}

/** The peer whose own session this is, if the session is a peer. */
export function peerOfSession(db: HostDb, sessionId: string): PeerRow | undefined {
  return db.select().from(peers).where(eq(peers.sessionId, sessionId)).get();
}

/** How many peers hold a slot on this host (open or stopping). */
export function countLivePeers(db: HostDb): number {
  return db.select({ n: sql<number>`count(*)` }).from(peers).where(inArray(peers.status, LIVE)).get()!.n;
}

/** The peers a session opened, oldest first. */
export function peersOpenedBy(db: HostDb, openerSessionId: string): PeerRow[] {
  return db.select().from(peers).where(eq(peers.openerSessionId, openerSessionId)).orderBy(asc(peers.openedAtMs), asc(peers.id)).all();
}

/** Every peer of the host, oldest first (for `klbr status`). */
export function allPeers(db: HostDb): PeerRow[] {
  return db.select().from(peers).orderBy(asc(peers.openedAtMs), asc(peers.id)).all();
}

/** Sessions whose peer is stopped: no cell runs there again. */
export function stoppedPeerSessions(db: HostDb): string[] {
  return db.select({ s: peers.sessionId }).from(peers).where(eq(peers.status, "stopped")).all().map((r) => r.s);
}

/** Move an open peer to stopping or stopped; returns the row if it was open (null otherwise). */
export function beginStop(db: HostDb, id: string, stop: { drain: boolean; atMs: number }): PeerRow | undefined {
  return db
    .update(peers)
    .set({
      status: stop.drain ? "stopping" : "stopped",
      stopDrain: stop.drain,
      stopRequestedAtMs: stop.atMs,
      ...(stop.drain ? {} : { stoppedBy: "hard", stoppedAtMs: stop.atMs }),
    })
    .where(and(eq(peers.id, id), eq(peers.status, "open")))
    .returning()
    .get();
}

/** Close a stopping peer (its drain ended, or a restart found it cut short). */
export function finishStop(db: HostDb, id: string, stoppedBy: string, atMs: number): PeerRow | undefined {
  return db
    .update(peers)
    .set({ status: "stopped", stoppedBy, stoppedAtMs: atMs })
    .where(and(eq(peers.id, id), eq(peers.status, "stopping")))
    .returning()
    .get();
}

/** Peers a crash left stopping. */
export function stoppingPeers(db: HostDb): PeerRow[] {
  return db.select().from(peers).where(eq(peers.status, "stopping")).all();
}

/** The C13 shape of a peer (`peer.get`, each entry of `peer.list`). */
export interface PeerView {
  peer_id: string;
  session_id: string;
  mode: string;
  status: PeerStatus;
  opened_at_ms: number;
  requests: { pending: number; answered: number; cancelled: number };
}

/** A peer as peer.get shows it, with its requests counted by status. */
export function peerView(db: HostDb, row: PeerRow): PeerView {
  const requests = { pending: 0, answered: 0, cancelled: 0 };
  const counts = db
    .select({ status: peerRequests.status, n: sql<number>`count(*)` })
    .from(peerRequests)
    .where(eq(peerRequests.peerId, row.id))
    .groupBy(peerRequests.status)
    .all();
  for (const c of counts) requests[c.status] = c.n;
  return { peer_id: row.id, session_id: row.sessionId, mode: row.mode, status: row.status, opened_at_ms: row.openedAtMs, requests };
}
