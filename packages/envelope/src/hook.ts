import * as v from "valibot";
import { HOOK_SLOTS, MAX_PRIORITY, MAX_SEND_TEXT_BYTES, MAX_WAIT_SECONDS } from "./limits.js";
import { boundedText, identifier, integer, positiveUpTo, record, variantOf } from "./rules.js";

/** A decision slot name. */
export const HookSlotSchema = v.picklist(HOOK_SLOTS);

/** Where an attention event came from, as the host classified it (C6). */
export const ATTENTION_SOURCES = ["operator", "discord.dm", "discord.mention", "discord.ambient"] as const;

/** `attention.plan` input (C6). */
export const AttentionInputSchema = record({
  event_id: integer(1),
  source: v.picklist(ATTENTION_SOURCES),
  received_at_ms: integer(0),
});

/** `delivery.review` input (C6). */
export const DeliveryInputSchema = record({
  effect_id: identifier,
  destination: v.picklist(["operator"]),
  text: boundedText(MAX_SEND_TEXT_BYTES),
});

const wake = v.strictObject({ action: v.literal("wake"), priority: integer(0, MAX_PRIORITY) });
const defer = v.strictObject({ action: v.literal("defer"), seconds: positiveUpTo(MAX_WAIT_SECONDS) });
const ignore = v.strictObject({ action: v.literal("ignore"), reason: v.string() });
const allow = v.strictObject({ action: v.literal("allow") });
const hold = v.strictObject({ action: v.literal("hold"), reason: v.string() });

/** `attention.plan` result: wake with a priority, defer for a while, or ignore with a reason. */
export const AttentionResultSchema = variantOf("action", [wake, defer, ignore]);

/** `delivery.review` result: allow, or hold with a reason. */
export const DeliveryResultSchema = variantOf("action", [allow, hold]);

/** Any hook result of either slot (what `completed` `hook` carries; the host knows the slot). */
export const AnyHookResultSchema = variantOf("action", [wake, defer, ignore, allow, hold]);
