import type { RequestContext } from "./context";
import { invalidRequest } from "./errors";

/** skills.index: the set this generation loaded: ids only for the model, the refusals with their reasons, the set revision. */
export async function skillsIndex(ctx: RequestContext): Promise<unknown> {
  return ctx.host.skills.index(ctx.live.sessionId);
}

/** skills.load: one body of this generation's set, refused when its bytes no longer match the digest it was loaded with. */
export async function skillsLoad(ctx: RequestContext, params: { id: string }): Promise<unknown> {
  if (typeof params.id !== "string") throw invalidRequest(`id must be a skill id string, got ${JSON.stringify(params.id)}`);
  return ctx.host.skills.load(ctx.live.sessionId, params.id);
}
