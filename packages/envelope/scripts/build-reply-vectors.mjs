// Writes fixtures/replies/maintenance-orientation.json: the ok values of the C11 replies. Every
// expected code below is written by hand from the check order in README.md, never computed.
// Run: node packages/envelope/scripts/build-reply-vectors.mjs
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../../../fixtures/replies/maintenance-orientation.json", import.meta.url));
const D = "3f".repeat(32);
const H = "0123456789abcdef".repeat(4);
const cases = [];
const ok = (description, method, value) => cases.push({ description, input: { method, value }, expected: value });
const bad = (description, method, value, code, path) => cases.push({ description, input: { method, value }, error: { code, path } });

const originate = { work_item_id: "wi-1", status: "open" };
const stage = { candidate_id: "c-1", digest: D, target: "style", scope: { kind: "global" }, status: "staged" };
const source = { target: "style", candidate_id: "c-1", digest: D, text: "Prefer short answers.", adopted_at_ms: 1796111094705, execution_id: "ex-1", operation_id: "op-1" };
const adopt = { candidate_id: "c-1", target: "style", digest: D, scope: { kind: "global" }, status: "adopted", header_digest: H };
const without = (value, key) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key));

ok("maintenance.originate: an open item", "maintenance.originate", originate);
for (const [status, outcome] of [["open", "deferred"], ["closed", "no-change"], ["closed", "changed"], ["closed", "abandoned"]]) {
  ok(`maintenance.assess: ${outcome} leaves it ${status}`, "maintenance.assess", { work_item_id: "wi-1", status, outcome });
}
ok("orientation.stage: staged for every session", "orientation.stage", stage);
ok("orientation.stage: a restage of an adopted candidate, session scope", "orientation.stage", { ...stage, scope: { kind: "session", session_id: "root" }, status: "adopted" });
ok("orientation.current: nothing adopted", "orientation.current", { scope: { kind: "global" }, sources: [] });
ok("orientation.current: two sources of one session", "orientation.current", {
  scope: { kind: "session", session_id: "root" },
  sources: [source, { ...source, target: "tone", candidate_id: "c-2", text: "", adopted_at_ms: 0, operation_id: "op-2" }],
});
ok("orientation.adopt: adopted, with the adopting session's header digest", "orientation.adopt", adopt);
ok("orientation.adopt: a session scope, no header yet", "orientation.adopt", { ...adopt, scope: { kind: "session", session_id: "s-2" }, header_digest: null });

bad("maintenance.originate: not an object", "maintenance.originate", ["wi-1"], "ENVELOPE_NOT_OBJECT", "");
bad("maintenance.originate: status closed", "maintenance.originate", { ...originate, status: "closed" }, "ENVELOPE_INVALID_FIELD", "status");
bad("maintenance.originate: no work_item_id", "maintenance.originate", without(originate, "work_item_id"), "ENVELOPE_MISSING_FIELD", "work_item_id");
bad("maintenance.originate: an extra key", "maintenance.originate", { ...originate, outcome: null }, "ENVELOPE_UNKNOWN_FIELD", "outcome");
bad("maintenance.assess: an unknown outcome", "maintenance.assess", { work_item_id: "wi-1", status: "closed", outcome: "maybe" }, "ENVELOPE_INVALID_FIELD", "outcome");
bad("maintenance.assess: an unknown status", "maintenance.assess", { work_item_id: "wi-1", status: "deferred", outcome: "deferred" }, "ENVELOPE_INVALID_FIELD", "status");
bad("orientation.stage: an uppercase digest", "orientation.stage", { ...stage, digest: D.toUpperCase() }, "ENVELOPE_INVALID_FIELD", "digest");
bad("orientation.stage: a target that is not an identifier", "orientation.stage", { ...stage, target: "my style" }, "ENVELOPE_BAD_IDENTIFIER", "target");
bad("orientation.stage: an unknown scope kind", "orientation.stage", { ...stage, scope: { kind: "peer" } }, "ENVELOPE_UNKNOWN_KIND", "scope.kind");
bad("orientation.stage: status replaced", "orientation.stage", { ...stage, status: "replaced" }, "ENVELOPE_INVALID_FIELD", "status");
bad("orientation.current: sources not an array", "orientation.current", { scope: { kind: "global" }, sources: {} }, "ENVELOPE_INVALID_FIELD", "sources");
bad("orientation.current: a source without operation_id", "orientation.current", { scope: { kind: "global" }, sources: [without(source, "operation_id")] }, "ENVELOPE_MISSING_FIELD", "sources.0.operation_id");
bad("orientation.current: a negative adopted_at_ms", "orientation.current", { scope: { kind: "global" }, sources: [source, { ...source, adopted_at_ms: -1 }] }, "ENVELOPE_INVALID_FIELD", "sources.1.adopted_at_ms");
bad("orientation.current: a source with an extra key", "orientation.current", { scope: { kind: "global" }, sources: [{ ...source, scope: "global" }] }, "ENVELOPE_UNKNOWN_FIELD", "sources.0.scope");
bad("orientation.current: a session scope without session_id", "orientation.current", { scope: { kind: "session" }, sources: [] }, "ENVELOPE_MISSING_FIELD", "scope.session_id");
bad("orientation.adopt: status staged", "orientation.adopt", { ...adopt, status: "staged" }, "ENVELOPE_INVALID_FIELD", "status");
bad("orientation.adopt: no header_digest", "orientation.adopt", without(adopt, "header_digest"), "ENVELOPE_MISSING_FIELD", "header_digest");
bad("orientation.adopt: header_digest not a digest", "orientation.adopt", { ...adopt, header_digest: "abc" }, "ENVELOPE_INVALID_FIELD", "header_digest");

const file = {
  description: "Ok values of the C11 maintenance and orientation replies, run by @klbr/envelope (parseReplyValue) and klbr.envelope (parse_reply_value); the Python suite also returns each valid value through the runtime API.",
  notes: [
    "input: {method, value}; expected: the validated value; error: {code, path} with path dotted from the value (empty for the value itself).",
    "Generated by packages/envelope/scripts/build-reply-vectors.mjs; the expected codes there are written by hand.",
  ],
  cases,
};
writeFileSync(OUT, `${JSON.stringify(file, null, 1)}\n`);
console.log(`wrote ${cases.length} cases to ${OUT}`);
