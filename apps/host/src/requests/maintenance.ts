import { OUTCOMES, type Outcome } from "../store/work-items";
import type { RequestContext } from "./context";
import { invalidRequest, ReplyError } from "./errors";
import { resolveRef } from "./evidence";
import { checkIdentifier, checkTextBytes } from "./limits";

/** C11: `purpose` and `reason` are 1..4,096 UTF-8 bytes. */
export const MAX_WORK_ITEM_TEXT_BYTES = 4096;

/** `maintenance.originate` reply (C11). */
export interface OriginateReply {
  work_item_id: string;
  status: "open";
}

/** `maintenance.assess` reply (C11). */
export interface AssessReply {
  work_item_id: string;
  status: "open" | "closed";
  outcome: Outcome;
}

/**
 * maintenance.originate: an open work item saying why something should change and on what
 * evidence. Every ref must resolve as in evidence.resolve, or nothing is written. A retry of the
 * same execution and request identity answers with the item it already made.
 */
export async function maintenanceOriginate(
  ctx: RequestContext,
  params: { purpose: string; reason: string; evidence_refs: string[] },
): Promise<OriginateReply> {
  const { host, live, requestId } = ctx;
  const purpose = checkTextBytes("purpose", params.purpose, MAX_WORK_ITEM_TEXT_BYTES);
  const reason = checkTextBytes("reason", params.reason, MAX_WORK_ITEM_TEXT_BYTES);
  if (!Array.isArray(params.evidence_refs)) throw invalidRequest("evidence_refs must be an array of refs");
  const refs = [...params.evidence_refs];
  const existing = await host.store.findWorkItemByRequest(live.id, requestId);
  if (existing) return { work_item_id: existing.id, status: "open" };
  // Refs name rows that are never deleted: one that resolves now still does when the item is written.
  for (const ref of refs) {
    const resolved = typeof ref === "string" ? await resolveRef(host.store, ref) : null;
    if (!resolved?.ok) {
      throw invalidRequest(`evidence ref ${JSON.stringify(ref)} does not resolve: ${resolved ? resolved.error.message : "not a string"}`);
    }
  }
  // A retry that raced this one there gets the item it made.
  const { row } = await host.store.originateWorkItem({
    id: host.newId("wi"),
    sessionId: live.sessionId,
    executionId: live.id,
    requestId,
    purpose,
    reason,
    evidenceRefs: refs,
    createdAtMs: host.now(),
  });
  return { work_item_id: row.id, status: "open" };
}

/**
 * maintenance.assess: `deferred` keeps the item open, `no-change`, `changed` and `abandoned`
 * close it. An unknown item is `not_found`; a closed one is `conflict` (nothing reopens it).
 */
export async function maintenanceAssess(ctx: RequestContext, params: { work_item_id: string; outcome: string }): Promise<AssessReply> {
  const { host, live, requestId } = ctx;
  const id = checkIdentifier("work_item_id", params.work_item_id);
  const outcome = params.outcome as Outcome;
  if (!OUTCOMES.includes(outcome)) {
    throw invalidRequest(`outcome must be one of ${OUTCOMES.map((o) => JSON.stringify(o)).join(", ")}, got ${JSON.stringify(params.outcome)}`);
  }
  const row = await host.store.assessWorkItem({ workItemId: id, sessionId: live.sessionId, executionId: live.id, requestId, outcome, atMs: host.now() }, (item) => {
    if (!item) throw new ReplyError("not_found", `work item ${JSON.stringify(id)} does not exist`);
    if (item.status === "closed") {
      throw new ReplyError("conflict", `work item ${JSON.stringify(id)} is closed (outcome ${JSON.stringify(item.outcome)}); it takes no further assessment`);
    }
  });
  return { work_item_id: row.id, status: row.status, outcome };
}
