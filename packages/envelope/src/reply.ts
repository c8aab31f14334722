import * as v from "valibot";
import { WORK_ITEM_OUTCOMES } from "./limits.js";
import { ScopeSchema } from "./host-request.js";
import { digest, identifier, integer, record } from "./rules.js";

/** `maintenance.originate` ok value (C11). */
export const OriginateReplySchema = record({ work_item_id: identifier, status: v.literal("open") });

/** `maintenance.assess` ok value (C11). */
export const AssessReplySchema = record({
  work_item_id: identifier,
  status: v.picklist(["open", "closed"]),
  outcome: v.picklist(WORK_ITEM_OUTCOMES),
});

/** `orientation.stage` ok value (C11). */
export const StageReplySchema = record({
  candidate_id: identifier,
  digest,
  target: identifier,
  scope: ScopeSchema,
  status: v.picklist(["staged", "adopted"]),
});

/** One adopted source in an `orientation.current` ok value (C11). */
export const CurrentSourceSchema = record({
  target: identifier,
  candidate_id: identifier,
  digest,
  text: v.string(),
  adopted_at_ms: integer(0),
  execution_id: identifier,
  operation_id: identifier,
});

/** `orientation.current` ok value (C11). */
export const CurrentReplySchema = record({ scope: ScopeSchema, sources: v.array(CurrentSourceSchema) });

/** `orientation.adopt` ok value (C11); `header_digest` is the adopting session's header after the change. */
export const AdoptReplySchema = record({
  candidate_id: identifier,
  target: identifier,
  digest,
  scope: ScopeSchema,
  status: v.literal("adopted"),
  header_digest: v.nullable(digest),
});

/** The ok value schema of each host request method whose reply shape is pinned here. */
export const REPLY_VALUE_SCHEMAS = {
  "maintenance.originate": OriginateReplySchema,
  "maintenance.assess": AssessReplySchema,
  "orientation.stage": StageReplySchema,
  "orientation.current": CurrentReplySchema,
  "orientation.adopt": AdoptReplySchema,
} as const;

/** A method whose ok value has a schema in {@link REPLY_VALUE_SCHEMAS}. */
export type ReplyMethod = keyof typeof REPLY_VALUE_SCHEMAS;
