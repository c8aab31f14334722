// The message of each rule's error: "CODE at path: expected <what the rule wants>, got <value>".
// The shared vectors pin codes and paths; these pin what each rule says it expected.
import { describe, expect, it } from "vitest";
import { envelopeErrorOf } from "../test/thrown.js";
import { parseEnvelope, parseHello, parseHookInput, parseHookResult, parseHostRequest } from "./parse.js";


const base = { version: 1, session_id: "root", generation: "g-1" };
const hello = { kind: "hello", token: "t", role: "workbench", revision: null, slots: [], skills: null };
const hooks = { ...hello, role: "hooks", revision: "0".repeat(64), slots: ["attention.plan", "delivery.review"] };
const cell = (over: object) => ({ ...base, message: { kind: "completed", id: "c", result: { kind: "cell", status: "ok", output: [], truncated_bytes: 0, error: null, ...over } } });

const CASES: [string, () => unknown, string][] = [
  ["a message that is no object", () => parseEnvelope({ ...base, message: [] }), "ENVELOPE_NOT_OBJECT at message: expected an object, got []"],
  ["a bad identifier", () => parseEnvelope({ ...base, session_id: "a b" }), 'ENVELOPE_BAD_IDENTIFIER at session_id: expected an identifier (1..128 of A-Z a-z 0-9 _ . -), got "a b"'],
  ["a bad digest", () => parseHello({ ...hooks, revision: "x" }), 'ENVELOPE_INVALID_FIELD at revision: expected a digest (64 lowercase hex), got "x"'],
  [
    "a bad reply code",
    () => parseEnvelope({ ...base, message: { kind: "host_reply", id: "r", execution_id: "x", reply: { kind: "error", code: "Bad", message: "m" } } }),
    'ENVELOPE_INVALID_FIELD at message.reply.code: expected a snake_case code ^[a-z][a-z0-9_]*$, got "Bad"',
  ],
  ["too much code", () => parseEnvelope({ ...base, message: { kind: "execute", id: "c", code: "x".repeat(262_145) } }), "ENVELOPE_LIMIT_EXCEEDED at message.code: expected at most 262144 UTF-8 bytes, got"],
  ["an empty purpose", () => parseHostRequest({ method: "maintenance.originate", purpose: "", reason: "r", evidence_refs: [] }), 'ENVELOPE_INVALID_FIELD at purpose: expected a non-empty string, got ""'],
  ["too long a purpose", () => parseHostRequest({ method: "maintenance.originate", purpose: "x".repeat(4097), reason: "r", evidence_refs: [] }), "ENVELOPE_LIMIT_EXCEEDED at purpose: expected at most 4096 UTF-8 bytes, got"],
  ["a negative epoch", () => parseHostRequest({ method: "behavior.activate", path: "p", expected_epoch: -1 }), "ENVELOPE_INVALID_FIELD at expected_epoch: expected an integer >= 0, got -1"],
  ["a zero timeout", () => parseHostRequest({ method: "workspace.run", argv: ["ls"], timeout_ms: 0 }), "ENVELOPE_INVALID_FIELD at timeout_ms: expected an integer in 1..3600000, got 0"],
  ["a zero wait", () => parseHostRequest({ method: "runtime.wait", seconds: 0, reason: "r" }), "ENVELOPE_INVALID_FIELD at seconds: expected a finite number in (0, 600], got 0"],
  ["an env value that is no string", () => parseHostRequest({ method: "workspace.run", argv: ["ls"], env: { A: 1 } }), 'ENVELOPE_INVALID_FIELD at env: expected an object of string values, got {"A":1}'],
  ["an empty argv", () => parseHostRequest({ method: "workspace.run", argv: [] }), "ENVELOPE_INVALID_FIELD at argv: expected a non-empty argv, got []"],
  ["no refs", () => parseHostRequest({ method: "evidence.resolve", refs: [] }), "ENVELOPE_INVALID_FIELD at refs: expected at least one ref, got []"],
  ["65 refs", () => parseHostRequest({ method: "evidence.resolve", refs: Array.from({ length: 65 }, () => "r") }), "ENVELOPE_LIMIT_EXCEEDED at refs: expected at most 64 refs, got"],
  ["an empty peer content", () => parseHostRequest({ method: "peer.send", peer_id: "p", request_id: "q", content: "", evidence: [] }), 'ENVELOPE_INVALID_FIELD at content: expected a non-empty string, got ""'],
  ["an empty token", () => parseHello({ ...hello, token: "" }), 'ENVELOPE_INVALID_FIELD at token: expected a non-empty token, got ""'],
  ["too long a token", () => parseHello({ ...hello, token: "x".repeat(257) }), "ENVELOPE_LIMIT_EXCEEDED at token: expected at most 256 UTF-8 bytes, got"],
  ["an empty runtime version", () => parseHello({ ...hello, runtime_version: "" }), 'ENVELOPE_INVALID_FIELD at runtime_version: expected a non-empty version, got ""'],
  ["too long a runtime version", () => parseHello({ ...hello, runtime_version: "x".repeat(65) }), "ENVELOPE_LIMIT_EXCEEDED at runtime_version: expected at most 64 UTF-8 bytes, got"],
  ["a slot twice", () => parseHello({ ...hooks, slots: ["attention.plan", "attention.plan"] }), 'ENVELOPE_INVALID_FIELD at slots: expected no duplicate slots, got ["attention.plan","attention.plan"]'],
  ["a workbench with a revision", () => parseHello({ ...hello, revision: "0".repeat(64) }), `ENVELOPE_ROLE_MISMATCH at revision: expected null for workbench, a digest for hooks, got "${"0".repeat(64)}"`],
  ["a workbench with slots", () => parseHello({ ...hello, slots: ["attention.plan"] }), 'ENVELOPE_ROLE_MISMATCH at slots: expected [] for workbench, exactly ["attention.plan","delivery.review"] (any order) for hooks, got ["attention.plan"]'],
  ["257 records", () => parseEnvelope(cell({ output: Array.from({ length: 257 }, () => ({ stream: "stdout", text: "" })) })), "ENVELOPE_LIMIT_EXCEEDED at message.result.output: expected at most 256 records, got"],
  ["65537 bytes of output", () => parseEnvelope(cell({ output: [{ stream: "stdout", text: "x".repeat(65_537) }] })), "ENVELOPE_LIMIT_EXCEEDED at message.result.output: expected at most 65536 UTF-8 bytes of text in all, got"],
  ["a live output without text", () => parseEnvelope({ ...base, message: { kind: "output", id: "c", seq: 0, stream: "stdout", text: "", dropped_bytes: 0 } }), 'ENVELOPE_INVALID_FIELD at message.text: expected a non-empty string, got ""'],
  ["a priority past 100", () => parseHookResult("attention.plan", { action: "wake", priority: 101 }), "ENVELOPE_INVALID_FIELD at priority: expected an integer in 0..100, got 101"],
  ["an event id of 0", () => parseHookInput("attention.plan", { event_id: 0, source: "operator", received_at_ms: 0 }), "ENVELOPE_INVALID_FIELD at event_id: expected an integer >= 1, got 0"],
];

describe("rule messages", () => {
  it.each(CASES)("%s", (_description, fn, expected) => {
    const message = envelopeErrorOf(fn).message;
    // A long value is cut in the message: those cases pin everything before it.
    if (expected.endsWith(", got")) expect(message.startsWith(`${expected} `), message).toBe(true);
    else expect(message).toBe(expected);
  });
});
