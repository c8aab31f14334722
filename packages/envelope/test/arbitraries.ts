// fast-check arbitraries for valid envelopes, plus the map of where strict objects sit in them.
import fc from "fast-check";
import { HOOK_SLOTS } from "../src/index.js";

const idChars = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
/** A valid identifier. */
export const identifier = fc.string({ unit: idChars, minLength: 1, maxLength: 128 });
/** A valid digest. */
export const digest = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });
const text = fc.string({ unit: "grapheme", maxLength: 40 });
const nonEmptyText = fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 });
const scope = fc.oneof(fc.record({ kind: fc.constant("global") }), fc.record({ kind: fc.constant("session"), session_id: identifier }));
const safeNat = fc.maxSafeNat();
const seconds = fc.double({ min: Number.MIN_VALUE, max: 600, noNaN: true });
const json = fc.jsonValue({ maxDepth: 3 });
const jsonObject = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4 });

const attentionInput = fc.record({
  event_id: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  source: fc.constantFrom("operator", "discord.dm", "discord.mention", "discord.ambient"),
  received_at_ms: safeNat,
});
const deliveryInput = fc.record({ effect_id: identifier, destination: fc.constant("operator"), text });
const hookValue = fc.oneof(
  fc.record({ action: fc.constant("wake"), priority: fc.integer({ min: 0, max: 100 }) }),
  fc.record({ action: fc.constant("defer"), seconds }),
  fc.record({ action: fc.constant("ignore"), reason: text }),
  fc.record({ action: fc.constant("allow") }),
  fc.record({ action: fc.constant("hold"), reason: text }),
);

const request = fc.oneof(
  fc.record({ method: fc.constant("local.send"), text }),
  fc.record({ method: fc.constant("runtime.wait"), seconds: fc.option(seconds, { nil: null }), reason: text }),
  fc.constantFrom("hooks.list", "runtime.inspect", "runtime.instructions", "skills.index", "workspace.info", "frontier.select", "peer.list").map(
    (method) => ({ method }),
  ),
  fc.record({ method: fc.constant("hooks.describe"), slot: fc.constantFrom(...HOOK_SLOTS) }),
  fc.record({ method: fc.constant("skills.load"), id: text }),
  fc.record(
    {
      method: fc.constant("workspace.run"),
      argv: fc.array(text, { minLength: 1, maxLength: 4 }),
      cwd: text,
      env: fc.dictionary(fc.string({ maxLength: 8 }), text, { maxKeys: 3 }),
      timeout_ms: fc.integer({ min: 1, max: 3_600_000 }),
      max_output_bytes: fc.integer({ min: 1, max: 750_000 }),
    },
    { requiredKeys: ["method", "argv"] },
  ),
  fc.record({ method: fc.constant("evidence.resolve"), refs: fc.array(text, { minLength: 1, maxLength: 64 }) }),
  fc.record({ method: fc.constant("behavior.activate"), path: text, expected_epoch: safeNat }),
  fc.record({ method: fc.constant("maintenance.originate"), purpose: nonEmptyText, reason: nonEmptyText, evidence_refs: fc.array(text, { maxLength: 3 }) }),
  fc.record({ method: fc.constant("maintenance.assess"), work_item_id: identifier, outcome: fc.constantFrom("no-change", "changed", "abandoned", "deferred") }),
  fc.record({ method: fc.constant("orientation.stage"), candidate_id: identifier, text: nonEmptyText, target: identifier, scope }),
  fc.record({ method: fc.constant("orientation.current"), scope }),
  fc.record({ method: fc.constant("orientation.adopt"), candidate_id: identifier, operation_id: identifier }),
  fc.record({ method: fc.constantFrom("peer.open", "agents.open"), mode: text, evidence: fc.array(json, { maxLength: 3 }) }),
  fc.record({
    method: fc.constantFrom("peer.send", "peer.message"),
    peer_id: identifier,
    request_id: identifier,
    content: nonEmptyText,
    evidence: fc.array(json, { maxLength: 3 }),
  }),
  fc.record({ method: fc.constant("peer.result"), request_id: identifier, wait_ms: fc.integer({ min: 0, max: 600_000 }) }),
  fc.record({ method: fc.constant("peer.submit_result"), request_id: identifier, result: jsonObject }),
  fc.record({ method: fc.constantFrom("peer.cancel"), request_id: identifier }),
  fc.record({ method: fc.constant("peer.get"), peer_id: identifier }),
  fc.record({ method: fc.constant("peer.stop"), peer_id: identifier, drain: fc.boolean() }),
  fc.record({ method: fc.constant("remote.ensure"), target: text }),
  fc.record({
    method: fc.constant("remote.call"),
    target: text,
    namespace_id: identifier,
    namespace_generation: identifier,
    operation_id: identifier,
    operation: text,
    payload: jsonObject,
  }),
  fc.record({ method: fc.constant("remote.cancel"), namespace_id: identifier, namespace_generation: identifier, operation_id: identifier }),
  fc.record({ method: fc.constant("remote.close"), namespace_id: identifier, namespace_generation: identifier }),
);

const cell = fc.record({
  kind: fc.constant("cell"),
  status: fc.constantFrom("ok", "error", "yielded", "interrupted"),
  output: fc.array(fc.record({ stream: fc.constantFrom("stdout", "stderr", "result"), text }), { maxLength: 8 }),
  truncated_bytes: safeNat,
  error: fc.option(text, { nil: null }),
  displays_dropped: fc.option(safeNat, { nil: undefined }),
}).map(({ displays_dropped, ...rest }) => (displays_dropped === undefined ? rest : { ...rest, displays_dropped }));

// C20 bundles: text types and a real PNG / JPEG signature in canonical base64.
const PNG_B64 = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64");
const JPEG_B64 = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74]).toString("base64");
const textMime = fc.constantFrom("text/html", "text/markdown", "text/latex", "image/svg+xml", "application/json", "application/vnd.a.b+json");
const displayData = fc
  .tuple(text, fc.dictionary(textMime, text, { maxKeys: 3 }), fc.boolean(), fc.boolean())
  .map(([plain, rest, png, jpeg]) => ({ "text/plain": plain, ...rest, ...(png ? { "image/png": PNG_B64 } : {}), ...(jpeg ? { "image/jpeg": JPEG_B64 } : {}) }));
const displayMetadata = fc
  .tuple(fc.dictionary(fc.constantFrom("image/png", "text/plain", "text/html"), jsonObject, { maxKeys: 2 }), fc.option(fc.integer({ min: 1, max: 10_000_000 }), { nil: undefined }))
  .map(([metadata, omitted]) => (omitted === undefined ? metadata : { ...metadata, "klbr/omitted": { "image/webp": omitted } }));

/** Any valid message. */
export const message = fc.oneof(
  fc.record({
    kind: fc.constant("hello"),
    token: fc.string({ minLength: 1, maxLength: 60 }),
    role: fc.constant("workbench"),
    revision: fc.constant(null),
    slots: fc.constant([]),
    skills: fc.option(digest, { nil: null }),
  }),
  fc.record({
    kind: fc.constant("hello"),
    token: fc.string({ minLength: 1, maxLength: 60 }),
    role: fc.constant("hooks"),
    revision: digest,
    slots: fc.constantFrom([...HOOK_SLOTS], [...HOOK_SLOTS].reverse()),
    skills: fc.option(digest, { nil: null }),
  }),
  fc.record({ kind: fc.constant("execute"), id: identifier, code: text }),
  fc.record({ kind: fc.constant("invoke"), id: identifier, slot: fc.constant("attention.plan"), input: attentionInput }),
  fc.record({ kind: fc.constant("invoke"), id: identifier, slot: fc.constant("delivery.review"), input: deliveryInput }),
  fc.record({ kind: fc.constant("host_request"), id: identifier, execution_id: identifier, request }),
  fc.record({
    kind: fc.constant("host_reply"),
    id: identifier,
    execution_id: identifier,
    reply: fc.oneof(
      fc.record({ kind: fc.constant("ok"), value: json }),
      fc.record({ kind: fc.constant("error"), code: fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/), message: text }),
    ),
  }),
  fc.record({
    kind: fc.constant("completed"),
    id: identifier,
    result: fc.oneof(cell, fc.record({ kind: fc.constant("hook"), value: hookValue }), fc.record({ kind: fc.constant("failed"), error: text })),
  }),
  fc.record({
    kind: fc.constant("output"),
    id: identifier,
    seq: safeNat,
    stream: fc.constantFrom("stdout", "stderr"),
    text: fc.string({ minLength: 1, maxLength: 60 }),
    dropped_bytes: safeNat,
  }),
  fc.record({ kind: fc.constant("display"), id: identifier, seq: fc.integer({ min: 0, max: 31 }), data: displayData, metadata: displayMetadata }),
  fc.record({ kind: fc.constant("interrupt"), id: identifier }),
  fc.record({ kind: fc.constant("shutdown") }),
);

/** Any valid envelope. */
export const envelope = fc.record({ version: fc.constant(1), session_id: identifier, generation: identifier, message });

type Json = unknown;
type Path = (string | number)[];

/**
 * Paths of every strict object inside a valid envelope: where an extra key must fail.
 * Opaque values (reply values, payloads, results, evidence items, env maps) are left out.
 */
export function strictObjectPaths(value: Record<string, Json>): Path[] {
  const paths: Path[] = [[]];
  const message = value.message as Record<string, Json>;
  paths.push(["message"]);
  if (message.kind === "invoke") paths.push(["message", "input"]);
  if (message.kind === "host_request") {
    paths.push(["message", "request"]);
    // Orientation scopes are strict too (C11): global or session, nothing else.
    if ((message.request as Record<string, Json>).scope !== undefined) paths.push(["message", "request", "scope"]);
  }
  if (message.kind === "host_reply") paths.push(["message", "reply"]);
  if (message.kind === "completed") {
    paths.push(["message", "result"]);
    const result = message.result as Record<string, Json>;
    if (result.kind === "hook") paths.push(["message", "result", "value"]);
    if (result.kind === "cell") (result.output as Json[]).forEach((_, i) => paths.push(["message", "result", "output", i]));
  }
  return paths;
}

/** The value at `path`. */
export function at(value: Json, path: Path): Json {
  return path.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], value);
}

/** A deep copy of `value` with `key` set at the object at `path` (as an own property, even `__proto__`). */
export function withKey(value: Json, path: Path, key: string, extra: Json): Json {
  const copy = structuredClone(value);
  Object.defineProperty(at(copy, path), key, { value: extra, enumerable: true, writable: true, configurable: true });
  return copy;
}
