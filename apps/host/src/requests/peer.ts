import type { PeerInput } from "../store/api/peer-exchange";
import type { PeerRequestRow } from "../store/peer-requests";
import type { PeerRow, PeerView } from "../store/peers";
import type { LiveExecution, RequestContext } from "./context";
import { invalidRequest, ReplyError } from "./errors";
import { resolveRef, type EvidenceStore } from "./evidence";

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

/** Scope again where the effect becomes durable (ARCHITECTURE: once before dispatch, once in the transaction). */
function checkScope(live: LiveExecution): void {
  if (live.yielded || live.ended) throw new ReplyError("scope_expired", `execution ${live.id} ${live.yielded ? "yielded" : "ended"}; nothing was done`);
}

/** Every evidence entry must be a reference that resolves as in evidence.resolve. */
async function checkEvidence(store: EvidenceStore, evidence: unknown[]): Promise<string[]> {
  const refs: string[] = [];
  for (const [i, ref] of evidence.entries()) {
    if (typeof ref !== "string") throw invalidRequest(`evidence[${i}] must be a reference string (event:N, execution:ID, effect:ID, wait:ID), got ${JSON.stringify(ref)}`);
    const resolved = await resolveRef(store, ref);
    if (!resolved.ok) throw invalidRequest(`evidence ${JSON.stringify(ref)} does not resolve: ${resolved.error.message}`);
    refs.push(ref);
  }
  return refs;
}

/** The peer as its opener `live` sees it; anyone else is told it does not exist. */
function ownedPeer(live: LiveExecution, peerId: string, peer: PeerRow | undefined): PeerRow {
  if (!peer || peer.openerSessionId !== live.sessionId) throw new ReplyError("not_found", `no peer ${JSON.stringify(peerId)} opened by session ${live.sessionId}`);
  return peer;
}

/** The peer `peerId` as its opener sees it, read now. */
async function ownPeer(store: RequestContext["host"]["store"], live: LiveExecution, peerId: string): Promise<PeerRow> {
  return ownedPeer(live, peerId, await store.getPeer(peerId));
}

/** A peer input: its payload, and the attention every peer input has. */
const peerInput = (payload: PeerInput["payload"]): PeerInput => ({ payload, attention: PEER_ATTENTION });

/** peer.open (agents.open): a new session of this host with its own workbench, started lazily, and its header pinned now. */
export async function peerOpen(ctx: RequestContext, params: { mode: string; evidence: unknown[] }): Promise<unknown> {
  const { host, live } = ctx;
  if (!(PEER_MODES as readonly string[]).includes(params.mode)) {
    throw invalidRequest(`mode must be one of ${PEER_MODES.join(", ")}, got ${JSON.stringify(params.mode)}`);
  }
  const evidence = await checkEvidence(host.store, params.evidence);
  const peerId = host.newId("peer");
  const sessionId = peerId.replace(/^peer-/, "ps-");
  const now = host.now();
  const row = await host.store.openPeer({ id: peerId, sessionId, openerSessionId: live.sessionId, openerExecutionId: live.id, mode: params.mode, evidence, openedAtMs: now }, (open) => {
    checkScope(live);
    if (open >= MAX_OPEN_PEERS) throw new ReplyError("limit_exceeded", `${open} peers are open on this host; at most ${MAX_OPEN_PEERS} (stop one with peer.stop)`);
  });
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
  const evidence = await checkEvidence(host.store, params.evidence);
  const now = host.now();
  const outcome = await host.store.sendPeerRequest(
    { requestId: params.request_id, peerId: params.peer_id, fromSessionId: live.sessionId, content: params.content, evidence, sentByExecutionId: live.id, sentAtMs: now },
    {
      repeat: (existing) => {
        if (existing.content === params.content && existing.peerId === params.peer_id) return;
        throw new ReplyError("conflict", `request ${params.request_id} was already sent by session ${live.sessionId} with other ${existing.peerId === params.peer_id ? "content" : `recipient (${existing.peerId})`}`);
      },
      peer: (row) => {
        checkScope(live);
        const peer = ownedPeer(live, params.peer_id, row);
        if (peer.status !== "open") throw new ReplyError("conflict", `peer ${peer.id} is ${peer.status}; it takes no requests`);
      },
      input: () => peerInput({ text: params.content, request_id: params.request_id, from_session: live.sessionId }),
    },
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
  const find = () => host.store.sentRequest(live.sessionId, params.request_id);
  let row = await find();
  if (!row) throw new ReplyError("not_found", `session ${live.sessionId} sent no peer request ${JSON.stringify(params.request_id)}`);
  if (row.status === "pending" && params.wait_ms > 0) {
    // Registered in the same tick as the read above resolved: an answer settled between the read's
    // statement and here would be missed, so the row is read again right after registering.
    const waiting = host.peerSignals.wait(row.id, params.wait_ms, ctx.signal);
    const again = (await find())!;
    if (again.status !== "pending") {
      host.peerSignals.settle(row.id);
      await waiting;
      return resultView(again);
    }
    const outcome = await waiting;
    if (outcome === "aborted") throw new ReplyError("scope_expired", `execution ${live.id} ended while it waited for ${params.request_id}`);
    row = (await find())!;
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
  const { row, admitted } = await host.store.answerPeerRequest(
    { toSessionId: live.sessionId, requestId: params.request_id, result: params.result, executionId: live.id, atMs: now },
    {
      check: (request) => {
        if (!request) throw new ReplyError("not_found", `session ${live.sessionId} received no peer request ${JSON.stringify(params.request_id)}`);
        if (request.status !== "pending") throw new ReplyError("conflict", `peer request ${params.request_id} is already ${request.status}`);
        checkScope(live);
      },
      input: (request) => peerInput({ text, result_of: request.requestId, from_session: live.sessionId, status: "answered" }),
    },
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
  const { row, admitted } = await host.store.cancelPeerRequest(
    { sessionId: live.sessionId, requestId: params.request_id, executionId: live.id, atMs: now },
    {
      check: (request) => {
        if (!request) throw new ReplyError("not_found", `session ${live.sessionId} has no peer request ${JSON.stringify(params.request_id)}`);
        if (request.status === "answered") throw new ReplyError("conflict", `peer request ${params.request_id} is already answered`);
        return request.status !== "cancelled";
      },
      scope: () => checkScope(live),
      input: (request) => peerInput({ text: "cancelled", result_of: request.requestId, from_session: live.sessionId, status: "cancelled" }),
    },
  );
  if (admitted) await host.wakes.announceInput(admitted.event, admitted.woken);
  host.peerSignals.settle(row.id);
  return { request_id: row.requestId, status: "cancelled" };
}

/** peer.get: one peer the caller's session opened. */
export async function peerGet(ctx: RequestContext, params: { peer_id: string }): Promise<PeerView> {
  const { store } = ctx.host;
  return store.peerView(await ownPeer(store, ctx.live, params.peer_id));
}

/** peer.list: every peer the caller's session opened, oldest first. */
export async function peerList(ctx: RequestContext): Promise<{ peers: PeerView[] }> {
  const { store } = ctx.host;
  const peers: PeerView[] = [];
  for (const row of await store.peersOpenedBy(ctx.live.sessionId)) peers.push(await store.peerView(row));
  return { peers };
}

/**
 * peer.stop: pending requests are cancelled now and the peer takes no more. `drain: true` lets
 * the cell the peer runs finish, then shuts its workbench down (`stopping` until then; `stopped`
 * at once when it runs nothing); `drain: false` hard-stops the workbench now. Stopping a stopped
 * peer says so again; a hard stop of a draining peer cuts its drain short.
 */
export async function peerStop(ctx: RequestContext, params: { peer_id: string; drain: boolean }): Promise<unknown> {
  const { host, live } = ctx;
  const peer = await ownPeer(host.store, live, params.peer_id);
  if (peer.status === "stopped" || (peer.status === "stopping" && params.drain)) return { peer_id: peer.id, status: peer.status };
  const now = host.now();
  const cancelled = await host.store.stopPeer(peer.id, { drain: params.drain, executionId: live.id, atMs: now }, () => checkScope(live));
  for (const row of cancelled) host.peerSignals.settle(row.id);
  if (!params.drain) {
    await host.sessions.close(peer.sessionId, false);
    return { peer_id: peer.id, status: "stopped" };
  }
  const idle = host.sessions.idle(peer.sessionId);
  const drained = host.sessions.close(peer.sessionId, true).then(async (completed) => {
    if (completed) await host.store.finishStop(peer.id, "drain", host.now());
  });
  if (idle) {
    await drained;
    return { peer_id: peer.id, status: (await host.store.getPeer(peer.id))!.status };
  }
  drained.catch((error: Error) =>
    // The log may have closed with the host: the next start finishes the stop.
    host.store.recordIncident("peer.drain_failed", { peer_id: peer.id, error: error.message }, host.now()).catch(() => undefined),
  );
  return { peer_id: peer.id, status: "stopping" };
}
