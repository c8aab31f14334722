import type { RequestContext } from "./context";

/**
 * frontier.select (C12): the session asks to fold after the current cell. The frontier covers the
 * transcript through its last record (the reply that made this call); the cell's own result comes
 * after it, so the model reads it in the first request after the fold.
 */
export async function frontierSelect(ctx: RequestContext): Promise<unknown> {
  return ctx.host.frontiers.select(ctx.live.sessionId, ctx.live.id);
}
