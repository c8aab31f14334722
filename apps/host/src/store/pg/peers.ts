import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { peerRequests, peers } from "../../db/pg-schema";
import type { PeersStore } from "../api/peers";
import type { PeerRow } from "../peers";
import type { PgContext, Q } from "./context";

const LIVE: PeerRow["status"][] = ["open", "stopping"];
const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

/** Finish a stopping peer on `q` (recovery's transaction too). */
export async function finishStopOn(q: Q, id: string, stoppedBy: string, atMs: number): Promise<PeerRow | undefined> {
  return first<PeerRow>(await q.update(peers).set({ status: "stopped", stoppedBy, stoppedAtMs: atMs }).where(and(eq(peers.id, id), eq(peers.status, "stopping"))).returning());
}

/** Peers a crash left stopping, on `q`. */
export const stoppingOn = (q: Q) => q.select().from(peers).where(eq(peers.status, "stopping")) as Promise<PeerRow[]>;

/** PeersStore over PostgreSQL (peer rows name two sessions: written as the SQLite store writes them, under no one lease). */
export function pgPeers(c: PgContext): PeersStore {
  return {
    insertPeer: (row) => c.writeHost(async (tx) => first<PeerRow>(await tx.insert(peers).values({ ...row, status: "open" }).returning())!),
    getPeer: (id) => c.read(async (db) => first<PeerRow>(await db.select().from(peers).where(eq(peers.id, id)))),
    peerOfSession: (sessionId) => c.read(async (db) => first<PeerRow>(await db.select().from(peers).where(eq(peers.sessionId, sessionId)))),
    countLivePeers: () => c.read(async (db) => Number((await db.select({ n: sql<number>`count(*)` }).from(peers).where(inArray(peers.status, LIVE)))[0]!.n)),
    peersOpenedBy: (openerSessionId) => c.read((db) => db.select().from(peers).where(eq(peers.openerSessionId, openerSessionId)).orderBy(asc(peers.openedAtMs), asc(peers.id)) as Promise<PeerRow[]>),
    allPeers: () => c.read((db) => db.select().from(peers).orderBy(asc(peers.openedAtMs), asc(peers.id)) as Promise<PeerRow[]>),
    stoppedPeerSessions: () => c.read(async (db) => (await db.select({ s: peers.sessionId }).from(peers).where(eq(peers.status, "stopped"))).map((r) => r.s)),
    beginStop: (id, stop) =>
      c.writeHost(async (tx) =>
        first<PeerRow>(
          await tx
            .update(peers)
            .set({ status: stop.drain ? "stopping" : "stopped", stopDrain: stop.drain, stopRequestedAtMs: stop.atMs, ...(stop.drain ? {} : { stoppedBy: "hard", stoppedAtMs: stop.atMs }) })
            .where(and(eq(peers.id, id), eq(peers.status, "open")))
            .returning(),
        ),
      ),
    finishStop: (id, stoppedBy, atMs) => c.writeHost((tx) => finishStopOn(tx, id, stoppedBy, atMs)),
    stoppingPeers: () => c.read((db) => stoppingOn(db)),
    peerView: (row) =>
      c.read(async (db) => {
        const requests = { pending: 0, answered: 0, cancelled: 0 };
        const counts = await db.select({ status: peerRequests.status, n: sql<number>`count(*)` }).from(peerRequests).where(eq(peerRequests.peerId, row.id)).groupBy(peerRequests.status);
        for (const n of counts) requests[n.status] = Number(n.n);
        return { peer_id: row.id, session_id: row.sessionId, mode: row.mode, status: row.status, opened_at_ms: row.openedAtMs, requests };
      }),
  };
}
