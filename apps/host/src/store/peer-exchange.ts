// C13's peer exchanges on SQLite, each one immediate transaction (see api/peer-exchange.ts).
import type { HostDb } from "../db/open";
import type { Admitted, PeerExchangeStore, PeerInput } from "./api/peer-exchange";
import { recordInput } from "./events";
import { answerRequest, cancelPendingOfPeer, cancelRequest, insertPeerRequest, receivedRequest, sentRequest, setResultEvent, type PeerRequestRow } from "./peer-requests";
import { beginStop, countLivePeers, finishStop, getPeer, insertPeer, type PeerRow } from "./peers";
import { wakeWaits } from "./waits";

type Args<K extends keyof PeerExchangeStore> = Parameters<PeerExchangeStore[K]>;

/** Record `input` in `sessionId` and wake its waits, inside the caller's transaction. */
function admit(db: HostDb, sessionId: string, input: PeerInput, atMs: number): Admitted {
  const event = recordInput(db, { sessionId, source: "peer", receivedAtMs: atMs, payload: input.payload, attention: input.attention });
  return { event, woken: wakeWaits(db, sessionId, `event:${event.id}`, atMs) };
}

function immediate<T>(db: HostDb, fn: (tx: HostDb) => T): T {
  return db.transaction((tx) => fn(tx as never as HostDb), { behavior: "immediate" });
}

/** See PeerExchangeStore.openPeer. */
export function openPeer(db: HostDb, ...[row, check]: Args<"openPeer">): PeerRow {
  return immediate(db, (tx) => {
    check(countLivePeers(tx));
    return insertPeer(tx, row);
  });
}

/** See PeerExchangeStore.sendPeerRequest. */
export function sendPeerRequest(db: HostDb, ...[send, rules]: Args<"sendPeerRequest">): { row: PeerRequestRow; admitted: Admitted | null } {
  return immediate(db, (tx) => {
    const existing = sentRequest(tx, send.fromSessionId, send.requestId);
    if (existing) {
      rules.repeat(existing);
      return { row: existing, admitted: null };
    }
    const peer = getPeer(tx, send.peerId);
    rules.peer(peer);
    const admitted = admit(tx, peer!.sessionId, rules.input(peer!), send.sentAtMs);
    const row = insertPeerRequest(tx, { ...send, toSessionId: peer!.sessionId, eventId: admitted.event.id });
    return { row, admitted };
  });
}

/** See PeerExchangeStore.answerPeerRequest. */
export function answerPeerRequest(db: HostDb, ...[answer, rules]: Args<"answerPeerRequest">): { row: PeerRequestRow; admitted: Admitted } {
  return immediate(db, (tx) => {
    const request = receivedRequest(tx, answer.toSessionId, answer.requestId);
    rules.check(request);
    const answered = answerRequest(tx, request!.id, answer)!;
    const admitted = admit(tx, request!.fromSessionId, rules.input(request!), answer.atMs);
    setResultEvent(tx, request!.id, admitted.event.id);
    return { row: { ...answered, resultEventId: admitted.event.id }, admitted };
  });
}

/** See PeerExchangeStore.cancelPeerRequest. */
export function cancelPeerRequest(db: HostDb, ...[cancel, rules]: Args<"cancelPeerRequest">): { row: PeerRequestRow; admitted: Admitted | null } {
  return immediate(db, (tx) => {
    const sent = sentRequest(tx, cancel.sessionId, cancel.requestId);
    const request = sent ?? receivedRequest(tx, cancel.sessionId, cancel.requestId);
    if (!rules.check(request)) return { row: request!, admitted: null };
    rules.scope();
    const by = sent ? "opener" : "peer";
    const cancelled = cancelRequest(tx, request!.id, { by, executionId: cancel.executionId, atMs: cancel.atMs })!;
    if (by === "opener") return { row: cancelled, admitted: null };
    const admitted = admit(tx, request!.fromSessionId, rules.input(request!), cancel.atMs);
    setResultEvent(tx, request!.id, admitted.event.id);
    return { row: { ...cancelled, resultEventId: admitted.event.id }, admitted };
  });
}

/** See PeerExchangeStore.stopPeer. */
export function stopPeer(db: HostDb, ...[id, stop, check]: Args<"stopPeer">): PeerRequestRow[] {
  return immediate(db, (tx) => {
    check();
    if (getPeer(tx, id)?.status === "stopping") finishStop(tx, id, "hard", stop.atMs);
    else beginStop(tx, id, stop);
    return cancelPendingOfPeer(tx, id, stop);
  });
}
