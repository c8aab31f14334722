import type { RequestContext } from "./context";

/** skills.index: ids only for the model, plus the refusals with their reasons and the set revision. */
export async function skillsIndex(ctx: RequestContext): Promise<unknown> {
  return ctx.host.skillsIndex();
}

/** skills.load: one body, refused when its bytes no longer match the digest just indexed. */
export async function skillsLoad(ctx: RequestContext, params: { id: string }): Promise<unknown> {
  return ctx.host.loadSkill(params.id);
}
