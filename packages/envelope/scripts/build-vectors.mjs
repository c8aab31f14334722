// Writes fixtures/envelopes.json. Every expected code below is written by hand from the rules
// in README.md ("Check order"), never computed by either implementation.
// Run: node packages/envelope/scripts/build-vectors.mjs
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../../../fixtures/envelopes.json", import.meta.url));

// A float literal that JSON.stringify cannot write (1.0, 3.0): a marker replaced after stringify.
const float = (literal) => `@@float:${literal}@@`;

const D = "3f".repeat(32); // a valid digest
const D2 = "0123456789abcdef".repeat(4);
const env = (message, outer = {}) => ({ version: 1, session_id: "root", generation: "g-1", message, ...outer });
const req = (request) => env({ kind: "host_request", id: "req-1", execution_id: "exec-1", request });
const cell = (over = {}) => ({ kind: "cell", status: "ok", output: [], truncated_bytes: 0, error: null, ...over });
const done = (result) => env({ kind: "completed", id: "op-1", result });
const helloWb = (over = {}) => ({ kind: "hello", token: "tok-abc", role: "workbench", revision: null, slots: [], skills: null, ...over });
const helloHooks = (over = {}) => ({
  kind: "hello",
  token: "tok-abc",
  role: "hooks",
  revision: D,
  slots: ["attention.plan", "delivery.review"],
  skills: null,
  ...over,
});
const attention = (over = {}) => ({ event_id: 42, source: "operator", received_at_ms: 0, ...over });
const delivery = (over = {}) => ({ effect_id: "eff-1", destination: "operator", text: "hi", ...over });
const invokeA = (input, over = {}) => env({ kind: "invoke", id: "op-1", slot: "attention.plan", input, ...over });
const invokeD = (input, over = {}) => env({ kind: "invoke", id: "op-1", slot: "delivery.review", input, ...over });
const reply = (r) => env({ kind: "host_reply", id: "req-1", execution_id: "exec-1", reply: r });
const EURO = "\u20ac"; // 3 UTF-8 bytes, 1 UTF-16 unit
const bytes = (n, unit = "a") => unit.repeat(n);
const euroBytes = (n) => EURO.repeat(Math.floor(n / 3)) + "a".repeat(n % 3); // exactly n UTF-8 bytes

const cases = [];
const ok = (description, input, extra = {}) => cases.push({ description, ...extra, input, expected: extra.expected ?? input });
const bad = (description, input, code, path, extra = {}) => cases.push({ description, ...extra, input, error: { code, path } });

// ---- valid: one per message kind ------------------------------------------------------------
ok("hello: workbench, no skills", env(helloWb()));
ok("hello: workbench with a skills revision", env(helloWb({ skills: D2 })));
ok("hello: hooks with both slots", env(helloHooks()));
ok("hello: hooks slots in the other order", env(helloHooks({ slots: ["delivery.review", "attention.plan"], skills: D2 })));
ok("hello: token of exactly 256 bytes", env(helloWb({ token: bytes(256) })));
ok("execute: simple cell", env({ kind: "execute", id: "cell-1", code: "1 + 1" }));
ok("execute: empty code", env({ kind: "execute", id: "cell-1", code: "" }));
ok("execute: code of exactly 262144 UTF-8 bytes (multi-byte)", env({ kind: "execute", id: "cell-1", code: euroBytes(262144) }), { expected: "input" });
ok("invoke: attention.plan", invokeA(attention({ source: "discord.dm", received_at_ms: 1700000000000 })));
ok("invoke: delivery.review", invokeD(delivery()));
ok("interrupt", env({ kind: "interrupt", id: "cell-1" }));
ok("shutdown", env({ kind: "shutdown" }));
ok("host_reply: ok with a number", reply({ kind: "ok", value: 42 }));
ok("host_reply: ok with null", reply({ kind: "ok", value: null }));
ok("host_reply: ok with a nested value (opaque, any keys)", reply({ kind: "ok", value: { wait_id: "w-1", deadline_ms: null, pending_input: false, extra: [1, { a: 2 }] } }));
ok("host_reply: error", reply({ kind: "error", code: "not_found", message: "no such skill" }));
ok("completed: cell ok with output", done(cell({ output: [{ stream: "stdout", text: "hi\n" }, { stream: "result", text: "42" }] })));
ok("completed: cell error with traceback", done(cell({ status: "error", output: [{ stream: "stderr", text: "boom" }], error: "Traceback ...\nValueError: x" })));
ok("completed: cell yielded", done(cell({ status: "yielded" })));
ok("completed: cell interrupted with truncated bytes", done(cell({ status: "interrupted", truncated_bytes: 1234 })));
ok("completed: cell with exactly 256 records", done(cell({ output: Array.from({ length: 256 }, (_, i) => ({ stream: i % 2 ? "stdout" : "stderr", text: "x" })) })));
ok("completed: cell with exactly 65536 bytes of text in all", done(cell({ output: [{ stream: "stdout", text: euroBytes(32768) }, { stream: "stdout", text: bytes(32768) }] })), { expected: "input" });
ok("completed: cell error text of exactly 65536 bytes", done(cell({ status: "error", error: bytes(65536) })), { expected: "input" });
ok("completed: hook allow", done({ kind: "hook", value: { action: "allow" } }));
ok("completed: hook hold", done({ kind: "hook", value: { action: "hold", reason: "needs review" } }));
ok("completed: hook wake", done({ kind: "hook", value: { action: "wake", priority: 100 } }));
ok("completed: hook defer", done({ kind: "hook", value: { action: "defer", seconds: 2.5 } }));
ok("completed: hook ignore", done({ kind: "hook", value: { action: "ignore", reason: "ambient chatter" } }));
ok("completed: failed", done({ kind: "failed", error: "worker-level failure description" }));

// ---- valid: one per host request method (the spec's examples) -------------------------------
ok("request: local.send", req({ method: "local.send", text: "hello" }));
ok("request: runtime.wait with null seconds", req({ method: "runtime.wait", seconds: null, reason: "waiting for input" }));
ok("request: runtime.wait with 600 seconds", req({ method: "runtime.wait", seconds: 600, reason: "" }));
ok("request: runtime.wait with a tiny fraction", req({ method: "runtime.wait", seconds: 0.001, reason: "r" }));
ok("request: hooks.list", req({ method: "hooks.list" }));
ok("request: hooks.describe", req({ method: "hooks.describe", slot: "delivery.review" }));
ok("request: runtime.inspect", req({ method: "runtime.inspect" }));
ok("request: runtime.instructions", req({ method: "runtime.instructions" }));
ok("request: skills.index", req({ method: "skills.index" }));
ok("request: skills.load", req({ method: "skills.load", id: "workspace" }));
ok("request: workspace.info", req({ method: "workspace.info" }));
ok("request: workspace.run with every field", req({ method: "workspace.run", argv: ["cargo", "check"], cwd: ".", env: {}, timeout_ms: 120000, max_output_bytes: 750000 }));
ok("request: workspace.run with argv only", req({ method: "workspace.run", argv: ["ls"] }));
ok("request: workspace.run with an env map", req({ method: "workspace.run", argv: ["env"], env: { LANG: "C", EMPTY: "" }, timeout_ms: 3600000, max_output_bytes: 1 }));
ok("request: evidence.resolve", req({ method: "evidence.resolve", refs: ["event:42"] }));
ok("request: evidence.resolve with 64 refs", req({ method: "evidence.resolve", refs: Array.from({ length: 64 }, (_, i) => `event:${i}`) }));
ok("request: behavior.activate", req({ method: "behavior.activate", path: `/abs/releases/${D}`, expected_epoch: 3 }));
ok("request: maintenance.originate", req({ method: "maintenance.originate", purpose: "p", reason: "r", evidence_refs: [] }));
ok("request: maintenance.assess", req({ method: "maintenance.assess", work_item_id: "w", outcome: "no-change" }));
ok("request: orientation.stage", req({ method: "orientation.stage", candidate_id: "c", text: "t", target: "x", scope: { kind: "global" } }));
ok("request: orientation.current with a session scope", req({ method: "orientation.current", scope: { kind: "session", session_id: "root" } }));
ok("request: orientation.adopt", req({ method: "orientation.adopt", candidate_id: "c", operation_id: "op-1" }));
ok("request: maintenance.originate with 4096-byte purpose and reason and evidence", req({ method: "maintenance.originate", purpose: euroBytes(4096), reason: bytes(4096), evidence_refs: ["event:1", "work_item:wi-1", "candidate:c"] }));
for (const outcome of ["changed", "abandoned", "deferred"]) ok(`request: maintenance.assess ${outcome}`, req({ method: "maintenance.assess", work_item_id: "wi-1", outcome }));
ok("request: orientation.stage for a session, text of exactly 65536 bytes", req({ method: "orientation.stage", candidate_id: "c", text: euroBytes(65536), target: "style", scope: { kind: "session", session_id: "s-1" } }), { expected: "input" });
ok("request: frontier.select", req({ method: "frontier.select" }));
ok("request: peer.open", req({ method: "peer.open", mode: "independent", evidence: [] }));
ok("request: agents.open (alias of peer.open)", req({ method: "agents.open", mode: "independent", evidence: ["e", { any: 1 }] }));
ok("request: peer.send", req({ method: "peer.send", peer_id: "p", request_id: "req-1", content: "c", evidence: [] }));
ok("request: peer.message (alias of peer.send)", req({ method: "peer.message", peer_id: "p", request_id: "req-1", content: "c", evidence: [] }));
ok("request: peer.result", req({ method: "peer.result", request_id: "req-1", wait_ms: 0 }));
ok("request: peer.result with the longest wait (600000 ms, C13)", req({ method: "peer.result", request_id: "req-1", wait_ms: 600000 }));
ok("request: peer.send with content of exactly 65536 UTF-8 bytes (multi-byte)", req({ method: "peer.send", peer_id: "p", request_id: "req-1", content: euroBytes(65536), evidence: [] }), { expected: "input" });
ok("request: peer.submit_result", req({ method: "peer.submit_result", request_id: "req-1", result: {} }));
ok("request: peer.cancel", req({ method: "peer.cancel", request_id: "req-1" }));
ok("request: peer.get", req({ method: "peer.get", peer_id: "p" }));
ok("request: peer.list", req({ method: "peer.list" }));
ok("request: peer.stop", req({ method: "peer.stop", peer_id: "p", drain: true }));
ok("request: remote.ensure", req({ method: "remote.ensure", target: "build-host" }));
ok("request: remote.call", req({ method: "remote.call", target: "build-host", namespace_id: "n", namespace_generation: "g", operation_id: "op", operation: "execute", payload: {} }));
ok("request: remote.cancel", req({ method: "remote.cancel", namespace_id: "n", namespace_generation: "g", operation_id: "op" }));
ok("request: remote.close", req({ method: "remote.close", namespace_id: "n", namespace_generation: "g" }));

// ---- valid: identifiers, numbers, identity -------------------------------------------------
ok("identifiers: 128 characters of every allowed class", env({ kind: "shutdown" }, { session_id: "A".repeat(64) + "z9_.-".repeat(12) + "abcd" }));
ok("identifiers: a single character", env({ kind: "interrupt", id: "-" }, { session_id: "s", generation: "." }));
ok("version 1.0 is the number 1 (both languages accept it)", env({ kind: "shutdown" }, { version: float("1.0") }), {
  expected: env({ kind: "shutdown" }),
});
ok("integers: 50.0 is the integer 50", done({ kind: "hook", value: { action: "wake", priority: float("50.0") } }), {
  expected: done({ kind: "hook", value: { action: "wake", priority: 50 } }),
});
ok("integers: 3e0 is the integer 3", req({ method: "behavior.activate", path: "p", expected_epoch: float("3e0") }), {
  expected: req({ method: "behavior.activate", path: "p", expected_epoch: 3 }),
});
ok("identity: the expected session and generation match", env({ kind: "shutdown" }), { identity: { session_id: "root", generation: "g-1" } });
ok("identity: only the generation is expected", env({ kind: "shutdown" }, { session_id: "any" }), { identity: { generation: "g-1" } });
ok("identity: nothing expected, any session is fine", env({ kind: "shutdown" }, { session_id: "other", generation: "g-9" }));

// ---- valid: other entry points --------------------------------------------------------------
ok("hook_input: attention.plan", attention({ source: "discord.ambient" }), { entry: "hook_input", slot: "attention.plan" });
ok("hook_input: delivery.review", delivery(), { entry: "hook_input", slot: "delivery.review" });
ok("hook_result: attention.plan wake 0", { action: "wake", priority: 0 }, { entry: "hook_result", slot: "attention.plan" });
ok("hook_result: attention.plan defer 600", { action: "defer", seconds: 600 }, { entry: "hook_result", slot: "attention.plan" });
ok("hook_result: delivery.review hold", { action: "hold", reason: "" }, { entry: "hook_result", slot: "delivery.review" });
ok("host_request: peer.message alone", { method: "peer.message", peer_id: "p", request_id: "r", content: "c", evidence: [] }, { entry: "host_request" });
ok("hello: expected role hooks", helloHooks(), { entry: "hello", role: "hooks" });
ok("hello: no expected role", helloWb(), { entry: "hello" });

// ---- invalid: the envelope ------------------------------------------------------------------
bad("envelope: an array", [], "ENVELOPE_NOT_OBJECT", "");
bad("envelope: null", null, "ENVELOPE_NOT_OBJECT", "");
bad("envelope: a string", "hello", "ENVELOPE_NOT_OBJECT", "");
bad("envelope: missing version", { session_id: "root", generation: "g-1", message: { kind: "shutdown" } }, "ENVELOPE_MISSING_FIELD", "version");
bad("envelope: missing generation", { version: 1, session_id: "root", message: { kind: "shutdown" } }, "ENVELOPE_MISSING_FIELD", "generation");
bad("envelope: missing message", { version: 1, session_id: "root", generation: "g-1" }, "ENVELOPE_MISSING_FIELD", "message");
bad("envelope: an unknown outer field", env({ kind: "shutdown" }, { extra: 1 }), "ENVELOPE_UNKNOWN_FIELD", "extra");
bad("envelope: __proto__ is just an unknown field", env({ kind: "shutdown" }, { ["__proto__"]: {} }), "ENVELOPE_UNKNOWN_FIELD", "__proto__");
bad("version: 2", env({ kind: "shutdown" }, { version: 2 }), "ENVELOPE_BAD_VERSION", "version");
bad("version: the string 1", env({ kind: "shutdown" }, { version: "1" }), "ENVELOPE_BAD_VERSION", "version");
bad("version: true", env({ kind: "shutdown" }, { version: true }), "ENVELOPE_BAD_VERSION", "version");
bad("version: 1.5", env({ kind: "shutdown" }, { version: 1.5 }), "ENVELOPE_BAD_VERSION", "version");
bad("version: null", env({ kind: "shutdown" }, { version: null }), "ENVELOPE_BAD_VERSION", "version");
bad("session_id: empty", env({ kind: "shutdown" }, { session_id: "" }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("session_id: 129 characters", env({ kind: "shutdown" }, { session_id: "a".repeat(129) }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("session_id: a space", env({ kind: "shutdown" }, { session_id: "a b" }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("session_id: non-ASCII letter", env({ kind: "shutdown" }, { session_id: "caf\u00e9" }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("session_id: a trailing newline", env({ kind: "shutdown" }, { session_id: "root\n" }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("session_id: a number is a wrong type, not a bad identifier", env({ kind: "shutdown" }, { session_id: 5 }), "ENVELOPE_INVALID_FIELD", "session_id");
bad("generation: a slash", env({ kind: "shutdown" }, { generation: "g/1" }), "ENVELOPE_BAD_IDENTIFIER", "generation");
bad("identity: another session", env({ kind: "shutdown" }), "ENVELOPE_SESSION_MISMATCH", "session_id", { identity: { session_id: "other" } });
bad("identity: another generation", env({ kind: "shutdown" }), "ENVELOPE_GENERATION_MISMATCH", "generation", { identity: { session_id: "root", generation: "g-2" } });
bad("two faults: a session mismatch is found before a bad message", env({ kind: "nope" }), "ENVELOPE_SESSION_MISMATCH", "session_id", { identity: { session_id: "other" } });
bad("two faults: both identities differ, the session is reported", env({ kind: "shutdown" }), "ENVELOPE_SESSION_MISMATCH", "session_id", { identity: { session_id: "x", generation: "y" } });
bad("two faults: a bad identifier is reported before a mismatch", env({ kind: "shutdown" }, { session_id: "a b" }), "ENVELOPE_BAD_IDENTIFIER", "session_id", { identity: { session_id: "root" } });
bad("two faults: a bad session before a bad generation", env({ kind: "shutdown" }, { session_id: "", generation: "" }), "ENVELOPE_BAD_IDENTIFIER", "session_id");
bad("two faults: a bad generation before a bad message", env({ kind: "nope" }, { generation: "g 1" }), "ENVELOPE_BAD_IDENTIFIER", "generation");
bad("two faults: bad version before an unknown outer field", env({ kind: "shutdown" }, { version: 2, extra: 1 }), "ENVELOPE_BAD_VERSION", "version");
bad("two faults: a bad message is found before an unknown outer field", env({ kind: "nope" }, { extra: 1 }), "ENVELOPE_UNKNOWN_KIND", "message.kind");
bad("two faults: missing version before a bad session", { session_id: "a b", generation: "g", message: { kind: "shutdown" } }, "ENVELOPE_MISSING_FIELD", "version");

// ---- invalid: the message -------------------------------------------------------------------
bad("message: null", env(null), "ENVELOPE_NOT_OBJECT", "message");
bad("message: an array", env([{ kind: "shutdown" }]), "ENVELOPE_NOT_OBJECT", "message");
bad("message: missing kind", env({ id: "x" }), "ENVELOPE_MISSING_FIELD", "message.kind");
bad("message: unknown kind", env({ kind: "nope" }), "ENVELOPE_UNKNOWN_KIND", "message.kind");
bad("message: kind is a number", env({ kind: 5 }), "ENVELOPE_UNKNOWN_KIND", "message.kind");
bad("message: kind is case-sensitive", env({ kind: "Shutdown" }), "ENVELOPE_UNKNOWN_KIND", "message.kind");
bad("shutdown: an unknown field", env({ kind: "shutdown", extra: null }), "ENVELOPE_UNKNOWN_FIELD", "message.extra");
bad("shutdown: unknown fields are named in JavaScript property order (indices first)", env({ kind: "shutdown", zz: 1, 10: 2, 2: 3 }), "ENVELOPE_UNKNOWN_FIELD", "message.2");
bad("interrupt: missing id", env({ kind: "interrupt" }), "ENVELOPE_MISSING_FIELD", "message.id");
bad("interrupt: bad id", env({ kind: "interrupt", id: "a:b" }), "ENVELOPE_BAD_IDENTIFIER", "message.id");
bad("execute: code is not a string", env({ kind: "execute", id: "c", code: 5 }), "ENVELOPE_INVALID_FIELD", "message.code");
bad("execute: code of 262145 UTF-8 bytes in 87382 characters", env({ kind: "execute", id: "c", code: euroBytes(262145) }), "ENVELOPE_LIMIT_EXCEEDED", "message.code");
bad("two faults: execute bad id before a code of the wrong type", env({ kind: "execute", id: "a b", code: 5 }), "ENVELOPE_BAD_IDENTIFIER", "message.id");
bad("two faults: execute field fault before an unknown field", env({ kind: "execute", extra: 1, id: "a b", code: "" }), "ENVELOPE_BAD_IDENTIFIER", "message.id");
bad("two faults: execute missing field before an unknown field", env({ kind: "execute", extra: 1, code: "" }), "ENVELOPE_MISSING_FIELD", "message.id");

// ---- invalid: hello -------------------------------------------------------------------------
bad("hello: workbench with a revision", env(helloWb({ revision: D })), "ENVELOPE_ROLE_MISMATCH", "message.revision");
bad("hello: workbench with a slot", env(helloWb({ slots: ["attention.plan"] })), "ENVELOPE_ROLE_MISMATCH", "message.slots");
bad("hello: hooks without a revision", env(helloHooks({ revision: null })), "ENVELOPE_ROLE_MISMATCH", "message.revision");
bad("hello: hooks with one slot", env(helloHooks({ slots: ["delivery.review"] })), "ENVELOPE_ROLE_MISMATCH", "message.slots");
bad("hello: hooks with no slots", env(helloHooks({ slots: [] })), "ENVELOPE_ROLE_MISMATCH", "message.slots");
bad("hello: duplicate slots", env(helloHooks({ slots: ["attention.plan", "attention.plan"] })), "ENVELOPE_INVALID_FIELD", "message.slots");
bad("hello: an unknown slot", env(helloHooks({ slots: ["attention.plan", "delivery.send"] })), "ENVELOPE_INVALID_FIELD", "message.slots.1");
bad("hello: slots not an array", env(helloHooks({ slots: "attention.plan" })), "ENVELOPE_INVALID_FIELD", "message.slots");
bad("hello: uppercase digest", env(helloHooks({ revision: D.toUpperCase() })), "ENVELOPE_INVALID_FIELD", "message.revision");
bad("hello: 63-character digest", env(helloHooks({ revision: D.slice(1) })), "ENVELOPE_INVALID_FIELD", "message.revision");
bad("hello: skills not a digest", env(helloWb({ skills: "abc" })), "ENVELOPE_INVALID_FIELD", "message.skills");
bad("hello: unknown role", env(helloWb({ role: "admin" })), "ENVELOPE_INVALID_FIELD", "message.role");
bad("hello: empty token", env(helloWb({ token: "" })), "ENVELOPE_INVALID_FIELD", "message.token");
bad("hello: token of 257 bytes", env(helloWb({ token: bytes(257) })), "ENVELOPE_LIMIT_EXCEEDED", "message.token");
bad("hello: token of 86 characters but 258 bytes", env(helloWb({ token: EURO.repeat(86) })), "ENVELOPE_LIMIT_EXCEEDED", "message.token");
bad("hello: missing skills", env({ kind: "hello", token: "t", role: "workbench", revision: null, slots: [] }), "ENVELOPE_MISSING_FIELD", "message.skills");
bad("two faults: hello field fault before the role rule", env(helloWb({ revision: D, skills: "abc" })), "ENVELOPE_INVALID_FIELD", "message.skills");
bad("two faults: hello unknown field before the role rule", env(helloWb({ revision: D, extra: 1 })), "ENVELOPE_UNKNOWN_FIELD", "message.extra");
bad("two faults: hello revision rule before the slots rule", env(helloWb({ revision: D, slots: ["attention.plan"] })), "ENVELOPE_ROLE_MISMATCH", "message.revision");

// ---- invalid: invoke and hook inputs --------------------------------------------------------
bad("invoke: missing slot", env({ kind: "invoke", id: "op-1", input: attention() }), "ENVELOPE_MISSING_FIELD", "message.slot");
bad("invoke: unknown slot", env({ kind: "invoke", id: "op-1", slot: "x", input: {} }), "ENVELOPE_INVALID_FIELD", "message.slot");
bad("two faults: invoke slot (a discriminator) before a bad id", env({ kind: "invoke", id: "a b", slot: "x", input: {} }), "ENVELOPE_INVALID_FIELD", "message.slot");
bad("invoke: event_id 0", invokeA(attention({ event_id: 0 })), "ENVELOPE_INVALID_FIELD", "message.input.event_id");
bad("invoke: event_id 1.5", invokeA(attention({ event_id: 1.5 })), "ENVELOPE_INVALID_FIELD", "message.input.event_id");
bad("invoke: event_id true", invokeA(attention({ event_id: true })), "ENVELOPE_INVALID_FIELD", "message.input.event_id");
bad("invoke: event_id a string", invokeA(attention({ event_id: "1" })), "ENVELOPE_INVALID_FIELD", "message.input.event_id");
bad("invoke: unknown source", invokeA(attention({ source: "discord" })), "ENVELOPE_INVALID_FIELD", "message.input.source");
bad("invoke: negative received_at_ms", invokeA(attention({ received_at_ms: -1 })), "ENVELOPE_INVALID_FIELD", "message.input.received_at_ms");
bad("invoke: missing received_at_ms", invokeA({ event_id: 1, source: "operator" }), "ENVELOPE_MISSING_FIELD", "message.input.received_at_ms");
bad("invoke: unknown input field", invokeA(attention({ priority: 1 })), "ENVELOPE_UNKNOWN_FIELD", "message.input.priority");
bad("invoke: input an array", invokeA([]), "ENVELOPE_NOT_OBJECT", "message.input");
bad("invoke: the other slot's input", invokeA(delivery()), "ENVELOPE_MISSING_FIELD", "message.input.event_id");
bad("invoke: destination other than operator", invokeD(delivery({ destination: "discord" })), "ENVELOPE_INVALID_FIELD", "message.input.destination");
bad("invoke: bad effect_id", invokeD(delivery({ effect_id: "e f" })), "ENVELOPE_BAD_IDENTIFIER", "message.input.effect_id");
bad("invoke: delivery text of 65537 bytes", invokeD(delivery({ text: euroBytes(65537) })), "ENVELOPE_LIMIT_EXCEEDED", "message.input.text");

// ---- invalid: host requests -----------------------------------------------------------------
bad("request: missing method", req({ text: "x" }), "ENVELOPE_MISSING_FIELD", "message.request.method");
bad("request: unknown method", req({ method: "nope.nope" }), "ENVELOPE_UNKNOWN_METHOD", "message.request.method");
bad("request: method a number", req({ method: 7 }), "ENVELOPE_UNKNOWN_METHOD", "message.request.method");
bad("request: an array", req([]), "ENVELOPE_NOT_OBJECT", "message.request");
bad("request: host_request missing execution_id", env({ kind: "host_request", id: "r", request: { method: "peer.list" } }), "ENVELOPE_MISSING_FIELD", "message.execution_id");
bad("two faults: host_request bad id before an unknown method", env({ kind: "host_request", id: "r r", execution_id: "e", request: { method: "x" } }), "ENVELOPE_BAD_IDENTIFIER", "message.id");
bad("local.send: an unknown field", req({ method: "local.send", text: "x", to: "op" }), "ENVELOPE_UNKNOWN_FIELD", "message.request.to");
bad("local.send: missing text", req({ method: "local.send" }), "ENVELOPE_MISSING_FIELD", "message.request.text");
bad("local.send: text of 65537 bytes", req({ method: "local.send", text: bytes(65537) }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.text");
bad("runtime.wait: 0 seconds", req({ method: "runtime.wait", seconds: 0, reason: "r" }), "ENVELOPE_INVALID_FIELD", "message.request.seconds");
bad("runtime.wait: 600.5 seconds", req({ method: "runtime.wait", seconds: 600.5, reason: "r" }), "ENVELOPE_INVALID_FIELD", "message.request.seconds");
bad("runtime.wait: negative seconds", req({ method: "runtime.wait", seconds: -1, reason: "r" }), "ENVELOPE_INVALID_FIELD", "message.request.seconds");
bad("runtime.wait: seconds a string", req({ method: "runtime.wait", seconds: "10", reason: "r" }), "ENVELOPE_INVALID_FIELD", "message.request.seconds");
bad("runtime.wait: missing seconds (null must be explicit)", req({ method: "runtime.wait", reason: "r" }), "ENVELOPE_MISSING_FIELD", "message.request.seconds");
bad("hooks.describe: unknown slot", req({ method: "hooks.describe", slot: "x" }), "ENVELOPE_INVALID_FIELD", "message.request.slot");
bad("workspace.run: empty argv", req({ method: "workspace.run", argv: [] }), "ENVELOPE_INVALID_FIELD", "message.request.argv");
bad("workspace.run: argv with a number", req({ method: "workspace.run", argv: ["ls", 1] }), "ENVELOPE_INVALID_FIELD", "message.request.argv.1");
bad("workspace.run: missing argv", req({ method: "workspace.run", cwd: "." }), "ENVELOPE_MISSING_FIELD", "message.request.argv");
bad("workspace.run: env value a number", req({ method: "workspace.run", argv: ["ls"], env: { A: 1 } }), "ENVELOPE_INVALID_FIELD", "message.request.env");
bad("workspace.run: env an array", req({ method: "workspace.run", argv: ["ls"], env: [] }), "ENVELOPE_NOT_OBJECT", "message.request.env");
bad("workspace.run: optional cwd is not nullable", req({ method: "workspace.run", argv: ["ls"], cwd: null }), "ENVELOPE_INVALID_FIELD", "message.request.cwd");
bad("workspace.run: timeout_ms 0", req({ method: "workspace.run", argv: ["ls"], timeout_ms: 0 }), "ENVELOPE_INVALID_FIELD", "message.request.timeout_ms");
bad("workspace.run: timeout_ms above an hour", req({ method: "workspace.run", argv: ["ls"], timeout_ms: 3600001 }), "ENVELOPE_INVALID_FIELD", "message.request.timeout_ms");
bad("workspace.run: max_output_bytes above 750000", req({ method: "workspace.run", argv: ["ls"], max_output_bytes: 750001 }), "ENVELOPE_INVALID_FIELD", "message.request.max_output_bytes");
bad("evidence.resolve: no refs", req({ method: "evidence.resolve", refs: [] }), "ENVELOPE_INVALID_FIELD", "message.request.refs");
bad("evidence.resolve: 65 refs", req({ method: "evidence.resolve", refs: Array.from({ length: 65 }, (_, i) => `e${i}`) }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.refs");
bad("evidence.resolve: a ref not a string", req({ method: "evidence.resolve", refs: [1] }), "ENVELOPE_INVALID_FIELD", "message.request.refs.0");
bad("behavior.activate: negative epoch", req({ method: "behavior.activate", path: "p", expected_epoch: -1 }), "ENVELOPE_INVALID_FIELD", "message.request.expected_epoch");
bad("behavior.activate: epoch 2^53 written as a float", req({ method: "behavior.activate", path: "p", expected_epoch: float("9007199254740992.0") }), "ENVELOPE_INVALID_FIELD", "message.request.expected_epoch");
bad("behavior.activate: epoch 1e300", req({ method: "behavior.activate", path: "p", expected_epoch: float("1e300") }), "ENVELOPE_INVALID_FIELD", "message.request.expected_epoch");
bad("orientation.stage: bad candidate_id", req({ method: "orientation.stage", candidate_id: "c d", text: "t", target: "x", scope: { kind: "global" } }), "ENVELOPE_BAD_IDENTIFIER", "message.request.candidate_id");
bad("orientation.current: scope without kind", req({ method: "orientation.current", scope: {} }), "ENVELOPE_MISSING_FIELD", "message.request.scope.kind");
bad("orientation.current: scope a string", req({ method: "orientation.current", scope: "global" }), "ENVELOPE_NOT_OBJECT", "message.request.scope");
bad("orientation.current: scope kind a number", req({ method: "orientation.current", scope: { kind: 1 } }), "ENVELOPE_UNKNOWN_KIND", "message.request.scope.kind");
bad("orientation.current: an unknown scope kind", req({ method: "orientation.current", scope: { kind: "peer", peer_id: "p" } }), "ENVELOPE_UNKNOWN_KIND", "message.request.scope.kind");
bad("orientation.current: a session scope without session_id", req({ method: "orientation.current", scope: { kind: "session" } }), "ENVELOPE_MISSING_FIELD", "message.request.scope.session_id");
bad("orientation.current: a session scope with a bad session_id", req({ method: "orientation.current", scope: { kind: "session", session_id: "a b" } }), "ENVELOPE_BAD_IDENTIFIER", "message.request.scope.session_id");
bad("orientation.current: a global scope with another field", req({ method: "orientation.current", scope: { kind: "global", session_id: "s" } }), "ENVELOPE_UNKNOWN_FIELD", "message.request.scope.session_id");
bad("orientation.stage: empty text", req({ method: "orientation.stage", candidate_id: "c", text: "", target: "x", scope: { kind: "global" } }), "ENVELOPE_INVALID_FIELD", "message.request.text");
bad("orientation.stage: text of 65537 bytes", req({ method: "orientation.stage", candidate_id: "c", text: euroBytes(65537), target: "x", scope: { kind: "global" } }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.text");
bad("orientation.stage: target not an identifier", req({ method: "orientation.stage", candidate_id: "c", text: "t", target: "a b", scope: { kind: "global" } }), "ENVELOPE_BAD_IDENTIFIER", "message.request.target");
bad("maintenance.originate: empty purpose", req({ method: "maintenance.originate", purpose: "", reason: "r", evidence_refs: [] }), "ENVELOPE_INVALID_FIELD", "message.request.purpose");
bad("maintenance.originate: purpose of 4097 bytes", req({ method: "maintenance.originate", purpose: euroBytes(4097), reason: "r", evidence_refs: [] }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.purpose");
bad("maintenance.originate: reason of 4097 bytes", req({ method: "maintenance.originate", purpose: "p", reason: bytes(4097), evidence_refs: [] }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.reason");
bad("maintenance.originate: an evidence ref not a string", req({ method: "maintenance.originate", purpose: "p", reason: "r", evidence_refs: [1] }), "ENVELOPE_INVALID_FIELD", "message.request.evidence_refs.0");
bad("maintenance.assess: unknown outcome", req({ method: "maintenance.assess", work_item_id: "wi-1", outcome: "maybe" }), "ENVELOPE_INVALID_FIELD", "message.request.outcome");
bad("maintenance.assess: work_item_id not an identifier", req({ method: "maintenance.assess", work_item_id: "w i", outcome: "changed" }), "ENVELOPE_BAD_IDENTIFIER", "message.request.work_item_id");
bad("orientation.adopt: bad operation_id", req({ method: "orientation.adopt", candidate_id: "c", operation_id: "" }), "ENVELOPE_BAD_IDENTIFIER", "message.request.operation_id");
bad("peer.open: evidence not an array", req({ method: "peer.open", mode: "m", evidence: {} }), "ENVELOPE_INVALID_FIELD", "message.request.evidence");
bad("peer.message: bad peer_id", req({ method: "peer.message", peer_id: "p q", request_id: "r", content: "c", evidence: [] }), "ENVELOPE_BAD_IDENTIFIER", "message.request.peer_id");
bad("peer.send: empty content (C13: 1..65536 bytes)", req({ method: "peer.send", peer_id: "p", request_id: "r", content: "", evidence: [] }), "ENVELOPE_INVALID_FIELD", "message.request.content");
bad("peer.message: content of 65537 bytes", req({ method: "peer.message", peer_id: "p", request_id: "r", content: euroBytes(65537), evidence: [] }), "ENVELOPE_LIMIT_EXCEEDED", "message.request.content");
bad("peer.result: negative wait_ms", req({ method: "peer.result", request_id: "r", wait_ms: -1 }), "ENVELOPE_INVALID_FIELD", "message.request.wait_ms");
bad("peer.result: wait_ms 600001 (C13: 0..600000)", req({ method: "peer.result", request_id: "r", wait_ms: 600001 }), "ENVELOPE_INVALID_FIELD", "message.request.wait_ms");
bad("peer.submit_result: result an array", req({ method: "peer.submit_result", request_id: "r", result: [] }), "ENVELOPE_NOT_OBJECT", "message.request.result");
bad("peer.stop: drain a string", req({ method: "peer.stop", peer_id: "p", drain: "yes" }), "ENVELOPE_INVALID_FIELD", "message.request.drain");
bad("peer.list: a parameter", req({ method: "peer.list", limit: 5 }), "ENVELOPE_UNKNOWN_FIELD", "message.request.limit");
bad("remote.call: payload null", req({ method: "remote.call", target: "t", namespace_id: "n", namespace_generation: "g", operation_id: "o", operation: "execute", payload: null }), "ENVELOPE_NOT_OBJECT", "message.request.payload");
bad("remote.call: bad namespace_generation", req({ method: "remote.call", target: "t", namespace_id: "n", namespace_generation: "g#", operation_id: "o", operation: "execute", payload: {} }), "ENVELOPE_BAD_IDENTIFIER", "message.request.namespace_generation");
bad("remote.close: an operation_id it does not take", req({ method: "remote.close", namespace_id: "n", namespace_generation: "g", operation_id: "o" }), "ENVELOPE_UNKNOWN_FIELD", "message.request.operation_id");

// ---- invalid: host replies ------------------------------------------------------------------
bad("host_reply: unknown reply kind", reply({ kind: "maybe" }), "ENVELOPE_UNKNOWN_KIND", "message.reply.kind");
bad("host_reply: ok without value", reply({ kind: "ok" }), "ENVELOPE_MISSING_FIELD", "message.reply.value");
bad("host_reply: ok with an extra field", reply({ kind: "ok", value: 1, code: "x" }), "ENVELOPE_UNKNOWN_FIELD", "message.reply.code");
bad("host_reply: error code not snake_case", reply({ kind: "error", code: "NotFound", message: "m" }), "ENVELOPE_INVALID_FIELD", "message.reply.code");
bad("host_reply: error code with a hyphen", reply({ kind: "error", code: "not-found", message: "m" }), "ENVELOPE_INVALID_FIELD", "message.reply.code");
bad("host_reply: error code starting with a digit", reply({ kind: "error", code: "1st", message: "m" }), "ENVELOPE_INVALID_FIELD", "message.reply.code");
bad("host_reply: error without message", reply({ kind: "error", code: "x" }), "ENVELOPE_MISSING_FIELD", "message.reply.message");
bad("host_reply: reply an array", reply([]), "ENVELOPE_NOT_OBJECT", "message.reply");

// ---- invalid: completed ---------------------------------------------------------------------
bad("completed: unknown result kind", done({ kind: "other" }), "ENVELOPE_UNKNOWN_KIND", "message.result.kind");
bad("completed: result null", done(null), "ENVELOPE_NOT_OBJECT", "message.result");
bad("completed: unknown cell status", done(cell({ status: "done" })), "ENVELOPE_INVALID_FIELD", "message.result.status");
bad("completed: 257 records", done(cell({ output: Array.from({ length: 257 }, () => ({ stream: "stdout", text: "" })) })), "ENVELOPE_LIMIT_EXCEEDED", "message.result.output");
bad("completed: 65537 bytes of text over two records", done(cell({ output: [{ stream: "stdout", text: euroBytes(32768) }, { stream: "stderr", text: bytes(32769) }] })), "ENVELOPE_LIMIT_EXCEEDED", "message.result.output");
bad("completed: unknown stream", done(cell({ output: [{ stream: "log", text: "" }] })), "ENVELOPE_INVALID_FIELD", "message.result.output.0.stream");
bad("completed: record not an object", done(cell({ output: [{ stream: "stdout", text: "" }, "x"] })), "ENVELOPE_NOT_OBJECT", "message.result.output.1");
bad("completed: record with an extra field", done(cell({ output: [{ stream: "stdout", text: "", at: 1 }] })), "ENVELOPE_UNKNOWN_FIELD", "message.result.output.0.at");
bad("two faults: a bad record is found before too many records", done(cell({ output: [...Array.from({ length: 256 }, () => ({ stream: "stdout", text: "" })), { stream: "x", text: "" }] })), "ENVELOPE_INVALID_FIELD", "message.result.output.256.stream");
bad("two faults: too many records before too much text", done(cell({ output: Array.from({ length: 257 }, () => ({ stream: "stdout", text: bytes(256) })) })), "ENVELOPE_LIMIT_EXCEEDED", "message.result.output");
bad("completed: negative truncated_bytes", done(cell({ truncated_bytes: -1 })), "ENVELOPE_INVALID_FIELD", "message.result.truncated_bytes");
bad("completed: fractional truncated_bytes", done(cell({ truncated_bytes: 1.5 })), "ENVELOPE_INVALID_FIELD", "message.result.truncated_bytes");
bad("completed: truncated_bytes null", done(cell({ truncated_bytes: null })), "ENVELOPE_INVALID_FIELD", "message.result.truncated_bytes");
bad("completed: error text of 65537 bytes", done(cell({ status: "error", error: euroBytes(65537) })), "ENVELOPE_LIMIT_EXCEEDED", "message.result.error");
bad("completed: error a number", done(cell({ error: 5 })), "ENVELOPE_INVALID_FIELD", "message.result.error");
bad("completed: cell missing error", done({ kind: "cell", status: "ok", output: [], truncated_bytes: 0 }), "ENVELOPE_MISSING_FIELD", "message.result.error");
bad("completed: hook with an unknown action", done({ kind: "hook", value: { action: "maybe" } }), "ENVELOPE_UNKNOWN_KIND", "message.result.value.action");
bad("completed: hook wake priority 101", done({ kind: "hook", value: { action: "wake", priority: 101 } }), "ENVELOPE_INVALID_FIELD", "message.result.value.priority");
bad("completed: hook defer 0 seconds", done({ kind: "hook", value: { action: "defer", seconds: 0 } }), "ENVELOPE_INVALID_FIELD", "message.result.value.seconds");
bad("completed: hook value without action", done({ kind: "hook", value: { reason: "x" } }), "ENVELOPE_MISSING_FIELD", "message.result.value.action");
bad("completed: failed error of 65537 bytes", done({ kind: "failed", error: bytes(65537) }), "ENVELOPE_LIMIT_EXCEEDED", "message.result.error");
bad("completed: failed without error", done({ kind: "failed" }), "ENVELOPE_MISSING_FIELD", "message.result.error");
bad("completed: failed error null", done({ kind: "failed", error: null }), "ENVELOPE_INVALID_FIELD", "message.result.error");

// ---- invalid: other entry points ------------------------------------------------------------
bad("hook_input: attention.plan event_id 0", attention({ event_id: 0 }), "ENVELOPE_INVALID_FIELD", "event_id", { entry: "hook_input", slot: "attention.plan" });
bad("hook_input: not an object", "x", "ENVELOPE_NOT_OBJECT", "", { entry: "hook_input", slot: "delivery.review" });
bad("hook_result: delivery.review cannot wake", { action: "wake", priority: 1 }, "ENVELOPE_UNKNOWN_KIND", "action", { entry: "hook_result", slot: "delivery.review" });
bad("hook_result: attention.plan cannot allow", { action: "allow" }, "ENVELOPE_UNKNOWN_KIND", "action", { entry: "hook_result", slot: "attention.plan" });
bad("hook_result: wake priority -1", { action: "wake", priority: -1 }, "ENVELOPE_INVALID_FIELD", "priority", { entry: "hook_result", slot: "attention.plan" });
bad("hook_result: defer seconds above 600", { action: "defer", seconds: 600.0001 }, "ENVELOPE_INVALID_FIELD", "seconds", { entry: "hook_result", slot: "attention.plan" });
bad("hook_result: ignore without reason", { action: "ignore" }, "ENVELOPE_MISSING_FIELD", "reason", { entry: "hook_result", slot: "attention.plan" });
bad("host_request: unknown method alone", { method: "agents.close" }, "ENVELOPE_UNKNOWN_METHOD", "method", { entry: "host_request" });
bad("hello: expected hooks, got workbench", helloWb(), "ENVELOPE_ROLE_MISMATCH", "role", { entry: "hello", role: "hooks" });
bad("hello: another kind", { kind: "execute", id: "c", code: "" }, "ENVELOPE_UNKNOWN_KIND", "kind", { entry: "hello", role: "workbench" });

ok("hello: workbench with a runtime version (optional)", env(helloWb({ runtime_version: "0.1.0" })));
bad("hello: an empty runtime version", env(helloWb({ runtime_version: "" })), "ENVELOPE_INVALID_FIELD", "message.runtime_version");
bad("hello: a runtime version of 65 bytes", env(helloWb({ runtime_version: bytes(65, "1") })), "ENVELOPE_LIMIT_EXCEEDED", "message.runtime_version");
bad("hello: a runtime version that is not a string", env(helloWb({ runtime_version: 1 })), "ENVELOPE_INVALID_FIELD", "message.runtime_version");
// ---- limits at the edge (issue 25 item 2): each limit's "at" case, beside its "one past" above --
ok("hello: a runtime version of exactly 64 UTF-8 bytes (multi-byte)", env(helloWb({ runtime_version: euroBytes(64) })));
ok("invoke: delivery text of exactly 65536 UTF-8 bytes (multi-byte)", invokeD(delivery({ text: euroBytes(65536) })), { expected: "input" });
ok("request: local.send with text of exactly 65536 bytes", req({ method: "local.send", text: bytes(65536) }), { expected: "input" });
ok("request: workspace.run with timeout_ms of exactly an hour (3600000)", req({ method: "workspace.run", argv: ["ls"], timeout_ms: 3600000 }));
ok("completed: hook defer of exactly 600 seconds", done({ kind: "hook", value: { action: "defer", seconds: 600 } }));
bad("completed: hook defer of 600.001 seconds", done({ kind: "hook", value: { action: "defer", seconds: 600.001 } }), "ENVELOPE_INVALID_FIELD", "message.result.value.seconds");
ok("hook_result: attention.plan wake priority 100", { action: "wake", priority: 100 }, { entry: "hook_result", slot: "attention.plan" });
bad("hook_result: attention.plan wake priority 101", { action: "wake", priority: 101 }, "ENVELOPE_INVALID_FIELD", "priority", { entry: "hook_result", slot: "attention.plan" });

const descriptions = new Set();
for (const item of cases) {
  if (descriptions.has(item.description)) throw new Error(`duplicate description: ${item.description}`);
  descriptions.add(item.description);
}

const document = {
  description: "Envelope and message validation vectors, run by @klbr/envelope (vitest) and klbr.envelope (pytest).",
  notes: [
    "entry: envelope (default) | host_request | hook_input | hook_result | hello; slot names the hook slot, role the expected hello role.",
    "identity: the expected {session_id?, generation?} passed to the envelope parser.",
    "expected: the validated value (integral floats such as 1.0 read as integers), or the string \"input\" when it equals the input (used for the large boundary cases); error: {code, path} with path dotted from the parsed value.",
    "Generated by packages/envelope/scripts/build-vectors.mjs; the expected codes there are written by hand.",
  ],
  cases,
};

const head = JSON.stringify({ description: document.description, notes: document.notes }, null, 2).slice(0, -2);
const body = cases.map((item) => `  ${JSON.stringify(item)}`).join(",\n");
// JavaScript objects hold index-like keys first, so JSON.stringify cannot write this order;
// a Python producer can, and the Python parser must still name the key JavaScript names.
const JS_ORDER = '{"2":3,"10":2,"kind":"shutdown","zz":1}';
const WIRE_ORDER = '{"kind":"shutdown","zz":1,"10":2,"2":3}';
if (!body.includes(JS_ORDER)) throw new Error("the key-order case is missing");
const text = `${head},\n "cases": [\n${body.replace(JS_ORDER, WIRE_ORDER)}\n ]\n}`.replace(/"@@float:([^@"]+)@@"/g, "$1");
writeFileSync(OUT, `${text}\n`);
const valid = cases.filter((item) => "expected" in item).length;
console.log(`wrote ${cases.length} cases (${valid} valid, ${cases.length - valid} invalid) to ${OUT}`);
