import { frameInput, stampOrUnknown } from "@klbr/transcript";
import type { FrontierSectionProvider } from "./frontier-block";

/**
 * The frontier block's peer section (C12: "open peer requests in both directions"): what the
 * session asked and still awaits, and what it was asked and has not answered, with the words of
 * each, so a folded transcript still knows what it owes and what it is owed. Received requests
 * are framed as the model first read them.
 */
export function peerRequestsSection(): FrontierSectionProvider {
  return async ({ store, sessionId }) => {
    const { outgoing, incoming } = await store.openPeerRequests(sessionId);
    const lines = [
      ...outgoing.map((r) => `sent, awaiting a result: request ${r.request_id} to ${r.to_session} (peer ${r.peer_id}), sent ${stampOrUnknown(r.sent_at_ms)}\n${r.content}`),
      ...incoming.map(
        (r) => `received, not answered: ${frameInput({ source: "peer", received_at_ms: r.sent_at_ms, payload: { text: r.content, request_id: r.request_id, from_session: r.from_session } })}`,
      ),
    ];
    return { title: "open peer requests", lines };
  };
}
