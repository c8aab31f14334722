import type { HostDb } from "../db/open";
import { recordInput, type EventRow } from "../store/events";
import { recordIncident } from "../store/incidents";
import {
  answerRequest,
  cancelPendingOfPeer,
  cancelRequest,
  insertPeerRequest,
  receivedRequest,
  sentRequest,
  setResultEvent,
  type PeerRequestRow,
} from "../store/peer-requests";
import { beginStop, countLivePeers, finishStop, getPeer, insertPeer, peersOpenedBy, peerView, type PeerRow, type PeerView } from "../store/peers";
import { wakeWaits, type WaitRow } from "../store/waits";
import type { LiveExecution, RequestContext } from "./context";
import { invalidRequest, ReplyError } from "./errors";
import { resolveRef } from "./evidence";

/** At most this many peers hold a slot (open or stopping) per host (C13). */
export const MAX_OPEN_PEERS = 8;
/** `peer.send` content: 1..65,536 UTF-8 bytes (C13). */
export const MAX_PEER_CONTENT_BYTES = 65_536;
/** `peer.submit_result` result: at most 262,144 bytes as JSON (C13). */
export const MAX_PEER_RESULT_BYTES = 262_144;
/** `peer.result` wait_ms: 0..600,000 (C13). */
export const MAX_PEER_WAIT_MS = 600_000;
/** The only mode C13 defines. */
export const PEER_MODES = ["independent"] as const;

/**
 * A peer input is not one of the sources attention.plan classifies (C6): it always wakes its
 * session, like operator input, and says why.
 */
const PEER_ATTENTION = { hook: null, revision: null, effective: { action: "wake", priority: 100, forced: true, reason: "peer input" } };

/** What a transaction made that the host announces once it is committed. */
interface Admitted {
  event: EventRow;
  woken: WaitRow[];
}

/** Scope again where the effect becomes durable (ARCHITECTURE: once before dispatch, once in the transaction). */
function checkScope(live: LiveExecution): void {
  if (live.yielded || live.ended) throw new ReplyError("scope_expired", `execution ${live.id} ${live.yielded ? "yielded" : "ended"}; nothing was done`);
}

/** Every evidence entry must be a reference that resolves as in evidence.resolve. */
function checkEvidence(db: HostDb, evidence: unknown[]): string[] {
  return evidence.map((ref, i) => {
    if (typeof ref !== "string") throw invalidRequest(`evidence[${i}] must be a reference string (event:N, execution:ID, effect:ID, wait:ID), got ${JSON.stringify(ref)}`);
    const resolved = resolveRef(db, ref);
    if (!resolved.ok) throw invalidRequest(`evidence ${JSON.stringify(ref)} does not resolve: ${resolved.error.message}`);
    return ref;
  });
}

/** The peer `peerId` as its opener sees it; anyone else is told it does not exist. */
function ownPeer(db: HostDb, live: LiveExecution, peerId: string): PeerRow {
  const peer = getPeer(db, peerId);
  if (!peer || peer.openerSessionId !== live.sessionId) throw new ReplyError("not_found", `no peer ${JSON.stringify(peerId)} opened by session ${live.sessionId}`);
  return peer;
}

/** Record an input in `sessionId` and wake its waits, inside the caller's transaction. */
function admit(db: HostDb, sessionId: string, payload: Record<string, unknown> & { text: string }, atMs: number): Admitted {
  const event = recordInput(db, { sessionId, source: "peer", receivedAtMs: atMs, payload, attention: PEER_ATTENTION });
  return { event, woken: wakeWaits(db, sessionId, `event:${event.id}`, atMs) };
}

/** peer.open (agents.open): a new session of this host with its own workbench, started lazily, and its header pinned now. */
export async function peerOpen(ctx: RequestContext, params: { mode: string; evidence: unknown[] }): Promise<unknown> {
  const { host, live } = ctx;
  if (!(PEER_MODES as readonly string[]).includes(params.mode)) {
    throw invalidRequest(`mode must be one of ${PEER_MODES.join(", ")}, got ${JSON.stringify(params.mode)}`);
  }
  const evidence = checkEvidence(host.db, params.evidence);
  const peerId = host.newId("peer");
  const sessionId = peerId.replace(/^peer-/, "ps-");
  const now = host.now();
  const row = host.db.transaction(
    (tx) => {
      checkScope(live);
      const open = countLivePeers(tx as never);
      if (open >= MAX_OPEN_PEERS) throw new ReplyError("limit_exceeded", `${open} peers are open on this host; at most ${MAX_OPEN_PEERS} (stop one with peer.stop)`);
      return insertPeer(tx as never, { id: peerId, sessionId, openerSessionId: live.sessionId, openerExecutionId: live.id, mode: params.mode, evidence, openedAtMs: now });
    },
    { behavior: "immediate" },
  );
  await host.sessions.pin(row.sessionId);
  return { peer_id: row.id, session_id: row.sessionId, status: "open" };
}

/** The reply a send got; a repeat of the same send gets it again. */
function sendReply(row: PeerRequestRow) {
  return { request_id: row.requestId, status: "queued", event_id: row.eventId };
}

/**
 * peer.send (peer.message): an input event in the peer's session carrying {request_id,
 * from_session}, the request row, and the peer's wake, in one transaction. Idempotent by the
 * opener's request id: the same content (to the same peer) returns the same reply, another is a
 * conflict.
 */
export async function peerSend(ctx: RequestContext, params: { peer_id: string; request_id: string; content: string; evidence: unknown[] }): Promise<unknown> {
  const { host, live } = ctx;
  const bytes = Buffer.byteLength(params.content);
  if (bytes < 1 || bytes > MAX_PEER_CONTENT_BYTES) throw invalidRequest(`content must be 1..${MAX_PEER_CONTENT_BYTES} bytes, got ${bytes}`);
  const evidence = checkEvidence(host.db, params.evidence);
  const now = host.now();
  const outcome = host.db.transaction(
    (tx) => {
      const db = tx as never as HostDb;
      const existing = sentRequest(db, live.sessionId, params.request_id);
      if (existing) {
        if (existing.content === params.content && existing.peerId === params.peer_id) return { row: existing, admitted: null };
        throw new ReplyError("conflict", `request ${params.request_id} was already sent by session ${live.sessionId} with other ${existing.peerId === params.peer_id ? "content" : `recipient (${existing.peerId})`}`);
      }
      checkScope(live);
      const peer = ownPeer(db, live, params.peer_id);
      if (peer.status !== "open") throw new ReplyError("conflict", `peer ${peer.id} is ${peer.status}; it takes no requests`);
      const admitted = admit(db, peer.sessionId, { text: params.content, request_id: params.request_id, from_session: live.sessionId }, now);
      const row = insertPeerRequest(db, {
        requestId: params.request_id,
        peerId: peer.id,
        fromSessionId: live.sessionId,
        toSessionId: peer.sessionId,
        content: params.content,
        evidence,
        eventId: admitted.event.id,
        sentByExecutionId: live.id,
        sentAtMs: now,
      });
      return { row, admitted };
    },
    { behavior: "immediate" },
  );
  if (outcome.admitted) await host.wakes.announceInput(outcome.admitted.event, outcome.admitted.woken);
  return sendReply(outcome.row);
}

/** The C13 peer.result value of a request row. */
function resultView(row: PeerRequestRow) {
  return row.status === "answered"
    ? { request_id: row.requestId, status: row.status, result: row.result }
    : { request_id: row.requestId, status: row.status };
}

/**
 * peer.result: the request's state now, or after waiting up to `wait_ms` inside the cell for it
 * to settle. The wait holds nothing but this request: other sessions, and other requests of this
 * cell, go on; the cell's end (an interrupt included) ends it at once.
 */
export async function peerResult(ctx: RequestContext, params: { request_id: string; wait_ms: number }): Promise<unknown> {
  const { host, live } = ctx;
  if (params.wait_ms > MAX_PEER_WAIT_MS) throw invalidRequest(`wait_ms must be 0..${MAX_PEER_WAIT_MS}, got ${params.wait_ms}`);
  const find = () => sentRequest(host.db, live.sessionId, params.request_id);
  let row = find();
  if (!row) throw new ReplyError("not_found", `session ${live.sessionId} sent no peer request ${JSON.stringify(params.request_id)}`);
  if (row.status === "pending" && params.wait_ms > 0) {
    // Registered in the same tick as the read above: an answer cannot land in between unseen.
    const outcome = await host.peerSignals.wait(row.id, params.wait_ms, ctx.signal);
    if (outcome === "aborted") throw new ReplyError("scope_expired", `execution ${live.id} ended while it waited for ${params.request_id}`);
    row = find()!;
  }
  return resultView(row);
}

/** peer.submit_result: the peer answers once; the opener gets a `peer result` input and is woken. */
export async function peerSubmitResult(ctx: RequestContext, params: { request_id: string; result: Record<string, unknown> }): Promise<unknown> {
  const { host, live } = ctx;
  const text = JSON.stringify(params.result);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PEER_RESULT_BYTES) throw invalidRequest(`result must be at most ${MAX_PEER_RESULT_BYTES} bytes encoded, got ${bytes}`);
  const now = host.now();
  const { row, admitted } = host.db.transaction(
    (tx) => {
      const db = tx as never as HostDb;
      const request = receivedRequest(db, live.sessionId, params.request_id);
      if (!request) throw new ReplyError("not_found", `session ${live.sessionId} received no peer request ${JSON.stringify(params.request_id)}`);
      if (request.status !== "pending") throw new ReplyError("conflict", `peer request ${params.request_id} is already ${request.status}`);
      checkScope(live);
      const answered = answerRequest(db, request.id, { result: params.result, executionId: live.id, atMs: now })!;
      const admitted = admit(db, request.fromSessionId, { text, result_of: request.requestId, from_session: live.sessionId, status: "answered" }, now);
      setResultEvent(db, request.id, admitted.event.id);
      return { row: answered, admitted };
    },
    { behavior: "immediate" },
  );
  await host.wakes.announceInput(admitted.event, admitted.woken);
  host.peerSignals.settle(row.id);
  return { request_id: row.requestId, status: "answered" };
}

/**
 * peer.cancel: the opener withdraws its request, or the peer declines one it received (then the
 * opener gets a `peer result` input saying so, and is woken). A conflict once it is answered;
 * cancelling a cancelled request says so again.
 */
export async function peerCancel(ctx: RequestContext, params: { request_id: string }): Promise<unknown> {
  const { host, live } = ctx;
  const now = host.now();
  const { row, admitted } = host.db.transaction(
    (tx) => {
      const db = tx as never as HostDb;
      const sent = sentRequest(db, live.sessionId, params.request_id);
      const request = sent ?? receivedRequest(db, live.sessionId, params.request_id);
      if (!request) throw new ReplyError("not_found", `session ${live.sessionId} has no peer request ${JSON.stringify(params.request_id)}`);
      if (request.status === "answered") throw new ReplyError("conflict", `peer request ${params.request_id} is already answered`);
      if (request.status === "cancelled") return { row: request, admitted: null };
      checkScope(live);
      const by = sent ? "opener" : "peer";
      const cancelled = cancelRequest(db, request.id, { by, executionId: live.id, atMs: now })!;
      if (by === "opener") return { row: cancelled, admitted: null };
      const admitted = admit(db, request.fromSessionId, { text: "cancelled", result_of: request.requestId, from_session: live.sessionId, status: "cancelled" }, now);
      setResultEvent(db, request.id, admitted.event.id);
      return { row: cancelled, admitted };
    },
    { behavior: "immediate" },
  );
  if (admitted) await host.wakes.announceInput(admitted.event, admitted.woken);
  host.peerSignals.settle(row.id);
  return { request_id: row.requestId, status: "cancelled" };
}

/** peer.get: one peer the caller's session opened. */
export async function peerGet(ctx: RequestContext, params: { peer_id: string }): Promise<PeerView> {
  return peerView(ctx.host.db, ownPeer(ctx.host.db, ctx.live, params.peer_id));
}

/** peer.list: every peer the caller's session opened, oldest first. */
export async function peerList(ctx: RequestContext): Promise<{ peers: PeerView[] }> {
  const { db } = ctx.host;
  return { peers: peersOpenedBy(db, ctx.live.sessionId).map((row) => peerView(db, row)) };
}

/**
 * peer.stop: pending requests are cancelled now and the peer takes no more. `drain: true` lets
 * the cell the peer runs finish, then shuts its workbench down (`stopping` until then; `stopped`
 * at once when it runs nothing); `drain: false` hard-stops the workbench now. Stopping a stopped
 * peer says so again; a hard stop of a draining peer cuts its drain short.
 */
export async function peerStop(ctx: RequestContext, params: { peer_id: string; drain: boolean }): Promise<unknown> {
  const { host, live } = ctx;
  const peer = ownPeer(host.db, live, params.peer_id);
  if (peer.status === "stopped" || (peer.status === "stopping" && params.drain)) return { peer_id: peer.id, status: peer.status };
  const now = host.now();
  const cancelled = host.db.transaction(
    (tx) => {
      const db = tx as never as HostDb;
      checkScope(live);
      if (peer.status === "stopping") finishStop(db, peer.id, "hard", now);
      else beginStop(db, peer.id, { drain: params.drain, atMs: now });
      return cancelPendingOfPeer(db, peer.id, { executionId: live.id, atMs: now });
    },
    { behavior: "immediate" },
  );
  for (const row of cancelled) host.peerSignals.settle(row.id);
  if (!params.drain) {
    await host.sessions.close(peer.sessionId, false);
    return { peer_id: peer.id, status: "stopped" };
  }
  const idle = host.sessions.idle(peer.sessionId);
  const drained = host.sessions.close(peer.sessionId, true).then((completed) => {
    if (completed) finishStop(host.db, peer.id, "drain", host.now());
  });
  if (idle) {
    await drained;
    return { peer_id: peer.id, status: getPeer(host.db, peer.id)!.status };
  }
  drained.catch((error: Error) => {
    try {
      recordIncident(host.db, "peer.drain_failed", { peer_id: peer.id, error: error.message }, host.now());
    } catch {
      /* the log closed with the host; the next start finishes the stop */
    }
  });
  return { peer_id: peer.id, status: "stopping" };
}
