import type { CallParams } from "../runtime/remote-service";
import type { RequestContext } from "./context";

// C14. The work is in runtime/remote-service.ts (it owns the live remote workers); these are the
// request family's entry points.

/** remote.ensure -> {target, namespace_id, namespace_generation, remote_pid}. */
export async function remoteEnsure(ctx: RequestContext, params: { target: string }): Promise<unknown> {
  return ctx.host.remote.ensure(ctx.live, params.target);
}

/** remote.call (`execute` only) -> the cell's completion record; idempotent by operation_id. */
export async function remoteCall(ctx: RequestContext, params: CallParams): Promise<unknown> {
  return ctx.host.remote.call(ctx.live, params, ctx.signal);
}

/** remote.cancel: the interrupt ladder, run remotely. */
export async function remoteCancel(ctx: RequestContext, params: { namespace_id: string; namespace_generation: string; operation_id: string }): Promise<unknown> {
  return ctx.host.remote.cancel(ctx.live, params);
}

/** remote.close: shut the namespace down with its remote tree. */
export async function remoteClose(ctx: RequestContext, params: { namespace_id: string; namespace_generation: string }): Promise<unknown> {
  return ctx.host.remote.close(ctx.live, params);
}
