import * as v from "valibot";
import { DisplayMessageSchema } from "./display.js";
import { AnyHookResultSchema, AttentionInputSchema, DeliveryInputSchema } from "./hook.js";
import { HostRequestSchema } from "./host-request.js";
import { isDigest } from "./identifier.js";
import {
  HOOK_SLOTS,
  MAX_CELL_SOURCE_BYTES,
  MAX_ERROR_BYTES,
  MAX_LIVE_OUTPUT_TEXT_BYTES,
  MAX_OUTPUT_RECORDS,
  MAX_OUTPUT_TEXT_BYTES,
  MAX_TOKEN_BYTES,
  MAX_RUNTIME_VERSION_BYTES,
} from "./limits.js";
import { boundedText, digest, errorCode, identifier, integer, nonEmptyText, record, rule, variantOf } from "./rules.js";
import { fitsUtf8, utf8Length } from "./text.js";

/** The two worker roles. */
export const WORKER_ROLES = ["workbench", "hooks"] as const;

/** Cell completion statuses. */
export const CELL_STATUSES = ["ok", "error", "yielded", "interrupted"] as const;

/** Output streams of a cell. */
export const OUTPUT_STREAMS = ["stdout", "stderr", "result"] as const;

/** Streams of a live `output` message (C16): a `result` is only ever in the completion. */
export const LIVE_OUTPUT_STREAMS = ["stdout", "stderr"] as const;

const kind = <const K extends string>(name: K) => v.literal(name);

const noDuplicates = rule("ENVELOPE_INVALID_FIELD", "no duplicate slots", (slots: readonly string[]) => new Set(slots).size === slots.length);

const revisionFitsRole = rule(
  "ENVELOPE_ROLE_MISMATCH",
  "null for workbench, a digest for hooks",
  (hello: { role: string; revision: string | null }) => (hello.role === "workbench" ? hello.revision === null : isDigest(hello.revision)),
);

const slotsFitRole = rule(
  "ENVELOPE_ROLE_MISMATCH",
  `[] for workbench, exactly ${JSON.stringify(HOOK_SLOTS)} (any order) for hooks`,
  (hello: { role: string; slots: readonly string[] }) =>
    hello.role === "workbench" ? hello.slots.length === 0 : hello.slots.length === HOOK_SLOTS.length,
);

const helloFields = v.strictObject({
  kind: kind("hello"),
  token: v.pipe(
    v.string(),
    v.check<string>(rule("ENVELOPE_INVALID_FIELD", "a non-empty token", (token: string) => token.length > 0)),
    v.check<string>(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${MAX_TOKEN_BYTES} UTF-8 bytes`, (token: string) => fitsUtf8(token, MAX_TOKEN_BYTES))),
  ),
  role: v.picklist(WORKER_ROLES),
  revision: v.nullable(digest),
  slots: v.pipe(v.array(v.picklist(HOOK_SLOTS)), v.check<(typeof HOOK_SLOTS)[number][]>(noDuplicates)),
  skills: v.nullable(digest),
  // Optional, so a C3 hello without it stays valid; the host compares it with its own version.
  runtime_version: v.optional(
    v.pipe(
      v.string(),
      v.check<string>(rule("ENVELOPE_INVALID_FIELD", "a non-empty version", (version: string) => version.length > 0)),
      v.check<string>(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${MAX_RUNTIME_VERSION_BYTES} UTF-8 bytes`, (version: string) => fitsUtf8(version, MAX_RUNTIME_VERSION_BYTES))),
    ),
  ),
});

type HelloFields = v.InferOutput<typeof helloFields>;

/** `hello`: the worker's first message; role rules are checked after every field is valid. */
export const HelloMessageSchema = v.pipe(
  helloFields,
  v.forward(v.check<HelloFields>(revisionFitsRole), ["revision"]),
  v.forward(v.check<HelloFields>(slotsFitRole), ["slots"]),
);

/** `execute`: run one cell in the workbench. */
export const ExecuteMessageSchema = v.strictObject({
  kind: kind("execute"),
  id: identifier,
  code: boundedText(MAX_CELL_SOURCE_BYTES),
});

/** `invoke`: call one hook slot with its typed input (a variant on `slot`). */
export const InvokeMessageSchema = v.variant("slot", [
  v.strictObject({ kind: kind("invoke"), id: identifier, slot: v.literal("attention.plan"), input: AttentionInputSchema }),
  v.strictObject({ kind: kind("invoke"), id: identifier, slot: v.literal("delivery.review"), input: DeliveryInputSchema }),
]);

/** `host_request`: a cell calls back into the host. */
export const HostRequestMessageSchema = v.strictObject({
  kind: kind("host_request"),
  id: identifier,
  execution_id: identifier,
  request: HostRequestSchema,
});

/** `host_reply` payload: `ok` with any value, or `error` with a snake_case code. */
export const HostReplySchema = variantOf("kind", [
  v.strictObject({ kind: kind("ok"), value: v.unknown() }),
  v.strictObject({ kind: kind("error"), code: errorCode, message: v.string() }),
]);

/** `host_reply`: the host answers one request, repeating its identity. */
export const HostReplyMessageSchema = v.strictObject({
  kind: kind("host_reply"),
  id: identifier,
  execution_id: identifier,
  reply: HostReplySchema,
});

/** One output record of a cell. */
export const OutputRecordSchema = record({
  stream: v.picklist(OUTPUT_STREAMS),
  text: v.string(),
});

type Records = v.InferOutput<typeof OutputRecordSchema>[];

const outputRecords = v.pipe(
  v.array(OutputRecordSchema),
  v.check<Records>(
    rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${MAX_OUTPUT_RECORDS} records`, (records: readonly unknown[]) => records.length <= MAX_OUTPUT_RECORDS),
  ),
  v.check<Records>(
    rule(
      "ENVELOPE_LIMIT_EXCEEDED",
      `at most ${MAX_OUTPUT_TEXT_BYTES} UTF-8 bytes of text in all`,
      (records: readonly { text: string }[]) => {
        let total = 0;
        for (const item of records) {
          total += utf8Length(item.text);
          if (total > MAX_OUTPUT_TEXT_BYTES) return false;
        }
        return true;
      },
    ),
  ),
);

/** `completed` result of a cell. */
export const CellResultSchema = v.strictObject({
  kind: kind("cell"),
  status: v.picklist(CELL_STATUSES),
  output: outputRecords,
  truncated_bytes: integer(0),
  error: v.nullable(boundedText(MAX_ERROR_BYTES)),
  // C20: displays past the 32 a cell may send; present exactly when the worker negotiated --display (DisplaySequence checks that).
  displays_dropped: v.optional(integer(0)),
});

/** `completed` result of a hook invocation (the value of either slot). */
export const HookResultSchema = v.strictObject({
  kind: kind("hook"),
  value: AnyHookResultSchema,
});

/** `completed` result of a worker-level failure. */
export const FailedResultSchema = v.strictObject({
  kind: kind("failed"),
  error: boundedText(MAX_ERROR_BYTES),
});

/** `completed.result`: cell, hook or failed. */
export const CompletedResultSchema = variantOf("kind", [CellResultSchema, HookResultSchema, FailedResultSchema]);

/** `completed`: an operation finished. */
export const CompletedMessageSchema = v.strictObject({
  kind: kind("completed"),
  id: identifier,
  result: CompletedResultSchema,
});

/**
 * `output` (C16, negotiated): what the running `execute` wrote, sent while it runs. `seq` counts
 * 0, 1, 2, ... per operation and `dropped_bytes` the bytes written since the previous message that
 * were not sent; those rules span messages, so {@link OutputSequence} checks them, not this schema.
 */
export const OutputMessageSchema = v.strictObject({
  kind: kind("output"),
  id: identifier,
  seq: integer(0),
  stream: v.picklist(LIVE_OUTPUT_STREAMS),
  text: nonEmptyText(MAX_LIVE_OUTPUT_TEXT_BYTES),
  dropped_bytes: integer(0),
});

/** `interrupt`: cancel one operation. */
export const InterruptMessageSchema = v.strictObject({ kind: kind("interrupt"), id: identifier });

/** `shutdown`: exit cleanly. */
export const ShutdownMessageSchema = v.strictObject({ kind: kind("shutdown") });

/** Any message, a variant on `kind` (and on `slot` for `invoke`). */
export const MessageSchema = variantOf("kind", [
  HelloMessageSchema,
  ExecuteMessageSchema,
  InvokeMessageSchema,
  HostRequestMessageSchema,
  HostReplyMessageSchema,
  CompletedMessageSchema,
  OutputMessageSchema,
  DisplayMessageSchema,
  InterruptMessageSchema,
  ShutdownMessageSchema,
]);
