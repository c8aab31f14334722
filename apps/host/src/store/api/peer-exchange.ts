import type { peers } from "../../db/schema";
import type { EventRow } from "../events";
import type { PeerRequestRow } from "../peer-requests";
import type { PeerRow } from "../peers";
import type { WaitRow } from "../waits";

/** An input a peer exchange records in a session (source `peer`), which wakes that session's waits. */
export interface PeerInput {
  payload: Record<string, unknown> & { text: string };
  attention: unknown;
}

/** What an exchange recorded in a session, announced by the host once it is committed. */
export interface Admitted {
  event: EventRow;
  woken: WaitRow[];
}

/**
 * C13's peer exchanges, each one transaction (store/peer-exchange.ts). The caller's rules decide
 * on the rows as the transaction reads them: a rule throws to refuse (nothing is written). Rows of
 * peers and peer requests name two sessions: written under no one lease, as the families they
 * write (PeersStore, PeerRequestsStore) are.
 */
export interface PeerExchangeStore {
  /** Open a peer when `check(peers holding a slot now)` lets it. */
  openPeer(row: Omit<typeof peers.$inferInsert, "status">, check: (livePeers: number) => void): Promise<PeerRow>;
  /**
   * peer.send: the request the sender already sent under `requestId` is `repeat`ed (returned as it
   * is when the rule lets it); else `peer(row)` vets the peer, its session gets `input(peer)` and is
   * woken, and the request row is written naming that input.
   */
  sendPeerRequest(
    send: { requestId: string; peerId: string; fromSessionId: string; content: string; evidence: string[]; sentByExecutionId: string; sentAtMs: number },
    rules: { repeat(existing: PeerRequestRow): void; peer(peer: PeerRow | undefined): void; input(peer: PeerRow): PeerInput },
  ): Promise<{ row: PeerRequestRow; admitted: Admitted | null }>;
  /** peer.submit_result: the request `toSessionId` received, vetted by `check`, answered once; its opener gets `input(request)` and is woken. */
  answerPeerRequest(
    answer: { toSessionId: string; requestId: string; result: unknown; executionId: string; atMs: number },
    rules: { check(request: PeerRequestRow | undefined): void; input(request: PeerRequestRow): PeerInput },
  ): Promise<{ row: PeerRequestRow; admitted: Admitted }>;
  /**
   * peer.cancel: the request the session sent (else the one it received). `check` vets it and
   * returns false to answer with it as it is (nothing written); `scope()` is asked before the
   * write. Cancelled by the opener: nothing more. By the peer: the opener gets `input(request)`.
   */
  cancelPeerRequest(
    cancel: { sessionId: string; requestId: string; executionId: string; atMs: number },
    rules: { check(request: PeerRequestRow | undefined): boolean; scope(): void; input(request: PeerRequestRow): PeerInput },
  ): Promise<{ row: PeerRequestRow; admitted: Admitted | null }>;
  /**
   * peer.stop after `check()`: a stopping peer is finished (`hard`), an open one begins its stop;
   * its pending requests cancelled with it. Returns the requests cancelled.
   */
  stopPeer(id: string, stop: { drain: boolean; executionId: string; atMs: number }, check: () => void): Promise<PeerRequestRow[]>;
}
