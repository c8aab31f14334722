import { receiptOf, type SendReceipt } from "../store/effects";
import type { RequestContext } from "./context";
import { ReplyError } from "./errors";

/** The reason a send is held when no valid review decision exists. */
function heldReason(outcome: Awaited<ReturnType<RequestContext["host"]["hooks"]["invoke"]>>): string | null {
  if (!outcome.ok) return `delivery review unavailable: ${outcome.reason}`;
  if (outcome.value.action === "allow") return null;
  if (outcome.value.action === "hold") return String(outcome.value.reason);
  return `delivery review returned an invalid result: ${JSON.stringify(outcome.value)}`;
}

/**
 * local.send: delivery.review decides. Allow -> a durable operator-lane event and a confirmed
 * receipt; anything else (hold, an invalid result, an unavailable hook) -> held with the reason.
 * A retry with the same execution and request identity returns the receipt it already has.
 */
export async function localSend(ctx: RequestContext, params: { text: string }): Promise<SendReceipt> {
  const { host, live, requestId } = ctx;
  const existing = await host.store.findEffect(live.id, requestId);
  if (existing) return receiptOf(existing);
  const effectId = host.newId("eff");
  const outcome = await host.hooks.invoke(live, "delivery.review", {
    effect_id: effectId,
    destination: "operator",
    text: params.text,
  });
  const reason = heldReason(outcome);
  const now = host.now();
  // One transaction: a concurrent retry that wrote the receipt meanwhile is found again there (and returned).
  const row = await host.store.recordSend(
    {
      id: effectId,
      sessionId: live.sessionId,
      executionId: live.id,
      requestId,
      kind: "local.send",
      text: params.text,
      status: reason === null ? "confirmed" : "held",
      reason,
      review: outcome.ok ? outcome.value : { unavailable: outcome.reason },
      hooksRevision: outcome.revision,
      createdAtMs: now,
    },
    reason === null ? { text: params.text } : null,
    () => {
      // The review took time: scope is checked again where the effect becomes durable, so a cell
      // that yielded or ended meanwhile makes no effect (spec "Scope, waiting and receipts").
      if (live.yielded || live.ended) {
        throw new ReplyError("scope_expired", `execution ${live.id} ${live.yielded ? "yielded" : "ended"} while its send was reviewed; nothing was sent`);
      }
    },
  );
  if (row.status === "confirmed" && row.id === effectId && row.eventId !== null) {
    host.notify({ type: "message", session_id: live.sessionId, event_id: row.eventId, text: params.text, at_ms: now });
  }
  return receiptOf(row);
}
