import type { WaitReply } from "../store/waits";
import type { RequestContext } from "./context";

/**
 * runtime.wait: record the deadline and check pending input in one transaction (C8), then
 * mark the execution yielded so nothing after the await can act. The wake starts the next
 * boundary; no Python continuation is kept.
 */
export async function runtimeWait(ctx: RequestContext, params: { seconds: number | null; reason: string }): Promise<WaitReply> {
  const { host, live } = ctx;
  const now = host.now();
  const { row, reply } = await host.store.createWait({
    id: host.newId("wait"),
    sessionId: live.sessionId,
    executionId: live.id,
    reason: params.reason,
    seconds: params.seconds,
    nowMs: now,
  });
  live.yielded = true;
  if (row.state === "woken") {
    const inputs = await host.wakes.takePendingInputs(live.sessionId);
    host.notify({ type: "wake", session_id: live.sessionId, wait_id: row.id, woken_by: "pending_input", at_ms: now, inputs });
  } else if (row.deadlineMs !== null) {
    host.wakes.scheduleWaitDeadline(row.id, row.deadlineMs);
  }
  return reply;
}

/** runtime.inspect (C8): the host clock, the session's worker and the behaviour revision. */
export async function runtimeInspect(ctx: RequestContext): Promise<unknown> {
  return ctx.host.status.inspect(ctx.live.sessionId);
}

/** runtime.instructions: the exact current instruction text, resolved from the header chain. */
export async function runtimeInstructions(ctx: RequestContext): Promise<unknown> {
  return ctx.host.instructions.current(ctx.live.sessionId);
}
