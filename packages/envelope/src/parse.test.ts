import { describe, expect, expectTypeOf, it } from "vitest";
import { EnvelopeError } from "./error.js";
import { canonicalMethod, HOST_REQUEST_METHODS } from "./host-request.js";
import {
  makeEnvelope,
  parseEnvelope,
  parseHello,
  parseHookInput,
  parseHookResult,
  parseHostRequest,
  safeParseEnvelope,
} from "./parse.js";
import type { AttentionResult, DeliveryInput, Envelope, HostRequestMethod, HostRequestOf, Message } from "./types.js";

const shutdown = { version: 1, session_id: "root", generation: "g-1", message: { kind: "shutdown" } };

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof EnvelopeError) return error.code;
    throw error;
  }
  return "ok";
}

describe("parseEnvelope", () => {
  it("returns a typed, fresh copy", () => {
    const envelope = parseEnvelope(shutdown);
    expect(envelope).toEqual(shutdown);
    expect(envelope).not.toBe(shutdown);
    expect(envelope.message).not.toBe(shutdown.message);
    expectTypeOf(envelope).toEqualTypeOf<Envelope>();
    if (envelope.message.kind === "execute") expectTypeOf(envelope.message.code).toBeString();
  });

  it("checks identity only when the caller states it", () => {
    expect(codeOf(() => parseEnvelope(shutdown, {}))).toBe("ok");
    expect(codeOf(() => parseEnvelope(shutdown, { sessionId: undefined, generation: "g-1" }))).toBe("ok");
    expect(codeOf(() => parseEnvelope(shutdown, { sessionId: "root" }))).toBe("ok");
    expect(codeOf(() => parseEnvelope(shutdown, { sessionId: "nope" }))).toBe("ENVELOPE_SESSION_MISMATCH");
    expect(codeOf(() => parseEnvelope(shutdown, { generation: "g-2" }))).toBe("ENVELOPE_GENERATION_MISMATCH");
  });

  it("rejects an undefined field value in a hand-built object (present, but not JSON)", () => {
    expect(codeOf(() => parseEnvelope({ ...shutdown, version: undefined }))).toBe("ENVELOPE_BAD_VERSION");
  });

  it("keeps opaque values by reference and does not copy them", () => {
    const value = { deep: [1, 2] };
    const envelope = parseEnvelope({ ...shutdown, message: { kind: "host_reply", id: "r", execution_id: "e", reply: { kind: "ok", value } } });
    expect(envelope.message.kind === "host_reply" && envelope.message.reply.kind === "ok" && envelope.message.reply.value).toBe(value);
  });
});

describe("safeParseEnvelope", () => {
  it("returns the envelope or the error", () => {
    expect(safeParseEnvelope(shutdown)).toEqual({ ok: true, envelope: shutdown });
    const failed = safeParseEnvelope({ ...shutdown, version: 2 });
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.error.code).toBe("ENVELOPE_BAD_VERSION");
  });

  it("throws what is not an EnvelopeError (a getter that throws) instead of returning it", () => {
    const message = Object.defineProperty({}, "kind", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    expect(() => safeParseEnvelope({ ...shutdown, message })).toThrow("boom");
  });
});

describe("makeEnvelope", () => {
  it("wraps a message in a validated v1 envelope", () => {
    const envelope = makeEnvelope("root", "g-1", { kind: "interrupt", id: "cell-1" });
    expect(envelope).toEqual({ version: 1, session_id: "root", generation: "g-1", message: { kind: "interrupt", id: "cell-1" } });
    expectTypeOf(envelope.message).toEqualTypeOf<{ kind: "interrupt"; id: string }>();
  });

  it("refuses an invalid identity or message", () => {
    expect(codeOf(() => makeEnvelope("a b", "g", { kind: "shutdown" }))).toBe("ENVELOPE_BAD_IDENTIFIER");
    expect(codeOf(() => makeEnvelope("s", "g", { kind: "execute", id: "c", code: "x".repeat(262_145) }))).toBe("ENVELOPE_LIMIT_EXCEEDED");
    expect(codeOf(() => makeEnvelope("s", "g", { kind: "nope" } as unknown as Message))).toBe("ENVELOPE_UNKNOWN_KIND");
  });
});

describe("parseHostRequest", () => {
  it("accepts every method with its spec example", () => {
    expect(HOST_REQUEST_METHODS).toHaveLength(32);
    expect(new Set(HOST_REQUEST_METHODS).size).toBe(32);
    expect(HOST_REQUEST_METHODS).toContain("agents.open");
    expect(HOST_REQUEST_METHODS).toContain("peer.message");
  });

  it("narrows the type by method", () => {
    const request = parseHostRequest({ method: "runtime.wait", seconds: null, reason: "r" });
    if (request.method === "runtime.wait") expectTypeOf(request.seconds).toEqualTypeOf<number | null>();
    expectTypeOf<HostRequestOf<"workspace.run">["timeout_ms"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<"peer.message">().toMatchTypeOf<HostRequestMethod>();
  });

  it("leaves optional workspace.run keys absent, not undefined", () => {
    const request = parseHostRequest({ method: "workspace.run", argv: ["ls"] });
    expect(Object.keys(request)).toEqual(["method", "argv"]);
  });
});

describe("canonicalMethod", () => {
  it("maps the two aliases and leaves the rest", () => {
    expect(canonicalMethod("agents.open")).toBe("peer.open");
    expect(canonicalMethod("peer.message")).toBe("peer.send");
    expect(canonicalMethod("peer.send")).toBe("peer.send");
    expectTypeOf(canonicalMethod("agents.open")).toEqualTypeOf<"peer.open">();
    for (const method of HOST_REQUEST_METHODS) expect(HOST_REQUEST_METHODS).toContain(canonicalMethod(method));
  });
});

describe("hook I/O", () => {
  it("types inputs and results by slot", () => {
    const input = parseHookInput("delivery.review", { effect_id: "e", destination: "operator", text: "hi" });
    expectTypeOf(input).toEqualTypeOf<DeliveryInput>();
    const result = parseHookResult("attention.plan", { action: "defer", seconds: 5 });
    expectTypeOf(result).toEqualTypeOf<AttentionResult>();
    expect(result).toEqual({ action: "defer", seconds: 5 });
  });

  it("throws RangeError for a slot that does not exist (a programming error, not wire data)", () => {
    expect(() => parseHookInput("nope" as "attention.plan", {})).toThrow(RangeError);
    expect(() => parseHookResult("nope" as "attention.plan", {})).toThrow(RangeError);
    expect(() => parseHookInput("nope" as "attention.plan", {})).toThrow('unknown hook slot "nope"');
  });
});

describe("parseHello", () => {
  const hello = { kind: "hello", token: "t", role: "workbench", revision: null, slots: [], skills: null };

  it("checks the expected role after the role rules", () => {
    expect(parseHello(hello, "workbench")).toEqual(hello);
    expect(codeOf(() => parseHello(hello, "hooks"))).toBe("ENVELOPE_ROLE_MISMATCH");
    expect(codeOf(() => parseHello({ ...hello, revision: "0".repeat(64) }, "hooks"))).toBe("ENVELOPE_ROLE_MISMATCH");
    // A role rule is checked on the whole hello but names the field, with the field's value.
    let error: unknown;
    try {
      parseHello({ ...hello, revision: "0".repeat(64) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: "ENVELOPE_ROLE_MISMATCH", path: "revision", value: "0".repeat(64) });
  });

  it("throws RangeError for a role that does not exist", () => {
    expect(() => parseHello(hello, "admin" as "hooks")).toThrow(RangeError);
    expect(() => parseHello(hello, "admin" as "hooks")).toThrow('unknown worker role "admin"');
  });
});

describe("expectation schemas", () => {
  it("never mix up two expectations, also past the cache size", () => {
    for (let i = 0; i < 200; i++) {
      const envelope = { ...shutdown, session_id: `s${i}`, generation: `g${i % 7}` };
      expect(codeOf(() => parseEnvelope(envelope, { sessionId: `s${i}`, generation: `g${i % 7}` }))).toBe("ok");
      expect(codeOf(() => parseEnvelope(envelope, { sessionId: `s${i + 1}` }))).toBe("ENVELOPE_SESSION_MISMATCH");
      expect(codeOf(() => parseEnvelope(envelope, { generation: `g${(i + 1) % 7}` }))).toBe("ENVELOPE_GENERATION_MISMATCH");
      expect(codeOf(() => parseEnvelope(envelope, { sessionId: `s${i}` }))).toBe("ok");
    }
  });
});
