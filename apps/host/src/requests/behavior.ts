import type { RequestContext } from "./context";

/** behavior.activate: candidate handshake first, then the epoch compare-and-swap. */
export async function behaviorActivate(ctx: RequestContext, params: { path: string; expected_epoch: number }): Promise<unknown> {
  return ctx.host.activate(params.path, params.expected_epoch);
}
