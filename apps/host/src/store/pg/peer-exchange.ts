// C13's peer exchanges on PostgreSQL, each one transaction (see api/peer-exchange.ts), with the
// rows they decide on locked: of two exchanges racing on one request or peer, the second reads
// what the first committed, as SQLite's BEGIN IMMEDIATE makes them one after the other.
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { events, peerRequests, peers, waits } from "../../db/pg-schema";
import type { Admitted, PeerExchangeStore, PeerInput } from "../api/peer-exchange";
import type { EventRow } from "../events";
import type { PeerRequestRow } from "../peer-requests";
import type { PeerRow } from "../peers";
import type { WaitRow } from "../waits";
import type { PgContext, Q } from "./context";
import { finishStopOn } from "./peers";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;
/** The advisory key every exchange takes first: the live-peer count and request identities are decided one at a time. */
const EXCHANGE = "klbr:peer-exchange";

async function admit(q: Q, sessionId: string, input: PeerInput, atMs: number): Promise<Admitted> {
  const [event] = (await q.insert(events).values({ sessionId, source: "peer", receivedAtMs: atMs, payload: input.payload, attention: input.attention, lane: "operator", direction: "in" }).returning()) as EventRow[];
  const woken = (await q.update(waits).set({ state: "woken", wokenBy: `event:${event!.id}`, wokenAtMs: atMs }).where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting"))).returning()) as WaitRow[];
  return { event: event!, woken };
}

const sentOn = async (q: Q, fromSessionId: string, requestId: string) => first<PeerRequestRow>(await q.select().from(peerRequests).where(and(eq(peerRequests.fromSessionId, fromSessionId), eq(peerRequests.requestId, requestId))));
const receivedOn = async (q: Q, toSessionId: string, requestId: string) =>
  first<PeerRequestRow>(await q.select().from(peerRequests).where(and(eq(peerRequests.toSessionId, toSessionId), eq(peerRequests.requestId, requestId))).orderBy(asc(peerRequests.id)).limit(1));
const setResultEventOn = (q: Q, id: number, eventId: number) => q.update(peerRequests).set({ resultEventId: eventId }).where(eq(peerRequests.id, id));

/** PeerExchangeStore over PostgreSQL (unfenced, as PeersStore and PeerRequestsStore write). */
export function pgPeerExchange(c: PgContext): PeerExchangeStore {
  const exchange = <T>(fn: (tx: Q) => Promise<T>) =>
    c.writeHost(async (tx) => {
      await c.serialize(tx, EXCHANGE);
      return fn(tx);
    });
  return {
    openPeer: (row, check) =>
      exchange(async (tx) => {
        check(Number((await tx.select({ n: sql<number>`count(*)` }).from(peers).where(inArray(peers.status, ["open", "stopping"])))[0]!.n));
        return first<PeerRow>(await tx.insert(peers).values({ ...row, status: "open" }).returning())!;
      }),
    sendPeerRequest: (send, rules) =>
      exchange(async (tx) => {
        const existing = await sentOn(tx, send.fromSessionId, send.requestId);
        if (existing) {
          rules.repeat(existing);
          return { row: existing, admitted: null };
        }
        const peer = first<PeerRow>(await tx.select().from(peers).where(eq(peers.id, send.peerId)));
        rules.peer(peer);
        const admitted = await admit(tx, peer!.sessionId, rules.input(peer!), send.sentAtMs);
        const row = first<PeerRequestRow>(await tx.insert(peerRequests).values({ ...send, toSessionId: peer!.sessionId, eventId: admitted.event.id, status: "pending" }).returning())!;
        return { row, admitted };
      }),
    answerPeerRequest: (answer, rules) =>
      exchange(async (tx) => {
        const request = await receivedOn(tx, answer.toSessionId, answer.requestId);
        rules.check(request);
        const answered = first<PeerRequestRow>(
          await tx
            .update(peerRequests)
            .set({ status: "answered", result: answer.result, answeredByExecutionId: answer.executionId, answeredAtMs: answer.atMs })
            .where(and(eq(peerRequests.id, request!.id), eq(peerRequests.status, "pending")))
            .returning(),
        )!;
        const admitted = await admit(tx, request!.fromSessionId, rules.input(request!), answer.atMs);
        await setResultEventOn(tx, request!.id, admitted.event.id);
        return { row: { ...answered, resultEventId: admitted.event.id }, admitted };
      }),
    cancelPeerRequest: (cancel, rules) =>
      exchange(async (tx) => {
        const sent = await sentOn(tx, cancel.sessionId, cancel.requestId);
        const request = sent ?? (await receivedOn(tx, cancel.sessionId, cancel.requestId));
        if (!rules.check(request)) return { row: request!, admitted: null };
        rules.scope();
        const by = sent ? "opener" : "peer";
        const cancelled = first<PeerRequestRow>(
          await tx
            .update(peerRequests)
            .set({ status: "cancelled", cancelledBy: by, cancelledByExecutionId: cancel.executionId, cancelledAtMs: cancel.atMs })
            .where(and(eq(peerRequests.id, request!.id), eq(peerRequests.status, "pending")))
            .returning(),
        )!;
        if (by === "opener") return { row: cancelled, admitted: null };
        const admitted = await admit(tx, request!.fromSessionId, rules.input(request!), cancel.atMs);
        await setResultEventOn(tx, request!.id, admitted.event.id);
        return { row: { ...cancelled, resultEventId: admitted.event.id }, admitted };
      }),
    stopPeer: (id, stop, check) =>
      exchange(async (tx) => {
        check();
        const peer = first<PeerRow>(await tx.select().from(peers).where(eq(peers.id, id)));
        if (peer?.status === "stopping") await finishStopOn(tx, id, "hard", stop.atMs);
        else
          await tx
            .update(peers)
            .set({ status: stop.drain ? "stopping" : "stopped", stopDrain: stop.drain, stopRequestedAtMs: stop.atMs, ...(stop.drain ? {} : { stoppedBy: "hard", stoppedAtMs: stop.atMs }) })
            .where(and(eq(peers.id, id), eq(peers.status, "open")));
        return (await tx
          .update(peerRequests)
          .set({ status: "cancelled", cancelledBy: "stop", cancelledByExecutionId: stop.executionId, cancelledAtMs: stop.atMs })
          .where(and(eq(peerRequests.peerId, id), eq(peerRequests.status, "pending")))
          .returning()) as PeerRequestRow[];
      }),
  };
}
