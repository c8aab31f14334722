import * as v from "valibot";
import {
  MAX_CANDIDATE_TEXT_BYTES,
  MAX_EVIDENCE_REFS,
  MAX_PEER_CONTENT_BYTES,
  MAX_PEER_WAIT_MS,
  MAX_RUN_OUTPUT_BYTES,
  MAX_RUN_TIMEOUT_MS,
  MAX_SEND_TEXT_BYTES,
  MAX_WAIT_SECONDS,
  MAX_WORK_ITEM_TEXT_BYTES,
  WORK_ITEM_OUTCOMES,
} from "./limits.js";
import { HookSlotSchema } from "./hook.js";
import {
  boundedText,
  identifier,
  integer,
  nonEmptyText,
  objectValue,
  positiveUpTo,
  rule,
  stringArray,
  stringMap,
  variantOf,
} from "./rules.js";

const method = <const M extends string>(name: M) => v.literal(name);

/** An orientation scope (C11): `{"kind": "global"}` or `{"kind": "session", "session_id": id}`, nothing else. */
export const ScopeSchema = variantOf("kind", [
  v.strictObject({ kind: v.literal("global") }),
  v.strictObject({ kind: v.literal("session"), session_id: identifier }),
]);

const evidenceRefs = v.pipe(
  stringArray,
  v.check(rule("ENVELOPE_INVALID_FIELD", "at least one ref", (refs: string[]) => refs.length > 0)),
  v.check(rule("ENVELOPE_LIMIT_EXCEEDED", `at most ${MAX_EVIDENCE_REFS} refs`, (refs: string[]) => refs.length <= MAX_EVIDENCE_REFS)),
);

const peerOpenParams = { mode: v.string(), evidence: v.array(v.unknown()) };
const peerSendParams = { peer_id: identifier, request_id: identifier, content: nonEmptyText(MAX_PEER_CONTENT_BYTES), evidence: v.array(v.unknown()) };

/** One strict schema per host request method (aliases included), in spec order. */
const requestOptions = [
  v.strictObject({ method: method("local.send"), text: boundedText(MAX_SEND_TEXT_BYTES) }),
  v.strictObject({ method: method("runtime.wait"), seconds: v.nullable(positiveUpTo(MAX_WAIT_SECONDS)), reason: v.string() }),
  v.strictObject({ method: method("hooks.list") }),
  v.strictObject({ method: method("hooks.describe"), slot: HookSlotSchema }),
  v.strictObject({ method: method("runtime.inspect") }),
  v.strictObject({ method: method("runtime.instructions") }),
  v.strictObject({ method: method("skills.index") }),
  v.strictObject({ method: method("skills.load"), id: v.string() }),
  v.strictObject({ method: method("workspace.info") }),
  v.strictObject({
    method: method("workspace.run"),
    argv: v.pipe(stringArray, v.check(rule("ENVELOPE_INVALID_FIELD", "a non-empty argv", (argv: string[]) => argv.length > 0))),
    cwd: v.optional(v.string()),
    env: v.optional(stringMap),
    timeout_ms: v.optional(integer(1, MAX_RUN_TIMEOUT_MS)),
    max_output_bytes: v.optional(integer(1, MAX_RUN_OUTPUT_BYTES)),
  }),
  v.strictObject({ method: method("evidence.resolve"), refs: evidenceRefs }),
  v.strictObject({ method: method("behavior.activate"), path: v.string(), expected_epoch: integer(0) }),
  v.strictObject({
    method: method("maintenance.originate"),
    purpose: nonEmptyText(MAX_WORK_ITEM_TEXT_BYTES),
    reason: nonEmptyText(MAX_WORK_ITEM_TEXT_BYTES),
    evidence_refs: stringArray,
  }),
  v.strictObject({ method: method("maintenance.assess"), work_item_id: identifier, outcome: v.picklist(WORK_ITEM_OUTCOMES) }),
  v.strictObject({
    method: method("orientation.stage"),
    candidate_id: identifier,
    text: nonEmptyText(MAX_CANDIDATE_TEXT_BYTES),
    target: identifier,
    scope: ScopeSchema,
  }),
  v.strictObject({ method: method("orientation.current"), scope: ScopeSchema }),
  v.strictObject({ method: method("orientation.adopt"), candidate_id: identifier, operation_id: identifier }),
  v.strictObject({ method: method("frontier.select") }),
  v.strictObject({ method: method("peer.open"), ...peerOpenParams }),
  v.strictObject({ method: method("agents.open"), ...peerOpenParams }),
  v.strictObject({ method: method("peer.send"), ...peerSendParams }),
  v.strictObject({ method: method("peer.message"), ...peerSendParams }),
  v.strictObject({ method: method("peer.result"), request_id: identifier, wait_ms: integer(0, MAX_PEER_WAIT_MS) }),
  v.strictObject({ method: method("peer.submit_result"), request_id: identifier, result: objectValue }),
  v.strictObject({ method: method("peer.cancel"), request_id: identifier }),
  v.strictObject({ method: method("peer.get"), peer_id: identifier }),
  v.strictObject({ method: method("peer.list") }),
  v.strictObject({ method: method("peer.stop"), peer_id: identifier, drain: v.boolean() }),
  v.strictObject({ method: method("remote.ensure"), target: v.string() }),
  v.strictObject({
    method: method("remote.call"),
    target: v.string(),
    namespace_id: identifier,
    namespace_generation: identifier,
    operation_id: identifier,
    operation: v.string(),
    payload: objectValue,
  }),
  v.strictObject({ method: method("remote.cancel"), namespace_id: identifier, namespace_generation: identifier, operation_id: identifier }),
  v.strictObject({ method: method("remote.close"), namespace_id: identifier, namespace_generation: identifier }),
] as const;

/** A host request: `{"method": ..., ...params}`, strict per method. */
export const HostRequestSchema = variantOf("method", requestOptions);

/** Every host request method name, aliases (`agents.open`, `peer.message`) included. */
export const HOST_REQUEST_METHODS = requestOptions.map((option) => option.entries.method.literal) as readonly HostRequestMethodName[];

type HostRequestMethodName = (typeof requestOptions)[number]["entries"]["method"]["literal"];

/** Aliases the spec accepts, mapped to the method they stand for. */
export const METHOD_ALIASES = { "agents.open": "peer.open", "peer.message": "peer.send" } as const;

/** The canonical name of a method: `agents.open` -> `peer.open`, `peer.message` -> `peer.send`. */
export function canonicalMethod<M extends HostRequestMethodName>(
  name: M,
): Exclude<M, keyof typeof METHOD_ALIASES> | (M extends keyof typeof METHOD_ALIASES ? (typeof METHOD_ALIASES)[M] : never) {
  return ((METHOD_ALIASES as Record<string, string>)[name] ?? name) as never;
}
