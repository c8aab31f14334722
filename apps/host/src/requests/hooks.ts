import { ReplyError } from "./errors";
import type { RequestContext } from "./context";

/** What each implemented slot takes and returns (C6), for hooks.describe. */
export const SLOT_CONTRACTS: Record<string, { input: string; results: string[] }> = {
  "attention.plan": {
    input: '{"event_id": int > 0, "source": "operator"|"discord.dm"|"discord.mention"|"discord.ambient", "received_at_ms": int >= 0}',
    results: ['{"action":"wake","priority":0..100}', '{"action":"defer","seconds":(0,600]}', '{"action":"ignore","reason":string}'],
  },
  "delivery.review": {
    input: '{"effect_id": id, "destination": "operator", "text": string <= 65,536 bytes}',
    results: ['{"action":"allow"}', '{"action":"hold","reason":string}'],
  },
};

function activeHooks(ctx: RequestContext) {
  const info = ctx.host.hooks.info();
  if (!info) throw new ReplyError("unavailable", "no behaviour revision is active");
  return info;
}

/** hooks.list: the active revision's slots and entrypoints. */
export async function hooksList(ctx: RequestContext): Promise<unknown> {
  const info = activeHooks(ctx);
  return {
    revision: info.revision,
    epoch: info.epoch,
    hooks: Object.entries(info.hooks).map(([slot, entrypoint]) => ({ slot, entrypoint })),
  };
}

/** hooks.describe: one slot's entrypoint and its typed contract. */
export async function hooksDescribe(ctx: RequestContext, params: { slot: string }): Promise<unknown> {
  const info = activeHooks(ctx);
  const contract = SLOT_CONTRACTS[params.slot];
  const entrypoint = info.hooks[params.slot];
  if (!contract || !entrypoint) throw new ReplyError("not_found", `no hook slot ${JSON.stringify(params.slot)}`);
  return { slot: params.slot, entrypoint, revision: info.revision, epoch: info.epoch, ...contract, budget_ms: 2000 };
}
