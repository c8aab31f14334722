import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DriverError, describeValue, isDriverError } from "./errors.js";
import { composeFrontierBlock } from "./frontier.js";
import { bodyDigest, prefixView, serializeMessages, sharedPrefixBytes } from "./prefix.js";
import { renderCellResult, renderTurnEnd } from "./render.js";
import { bodyMessages } from "./wire.js";

// The small helpers at their edges (issue 25): each boundary and one past it.
describe("describeValue", () => {
  it("cuts a rendering past 200 characters, not at 200", () => {
    const at = "x".repeat(198); // JSON adds the two quotes: 200 characters
    expect(describeValue(at)).toBe(`"${at}"`);
    expect(describeValue(`${at}y`)).toBe(`"${at}y`.slice(0, 200) + "...");
    expect(describeValue(undefined)).toBe("undefined");
    expect(describeValue(() => 1)).toBe("() => 1");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe("[object Object]");
    expect(describeValue(10n)).toBe("10");
  });
});

describe("DriverError", () => {
  it("defaults status to null and retries to 0, keeps what it is given", () => {
    const plain = new DriverError("DRIVER_ROUTE_FAILED", "m");
    expect([plain.name, plain.code, plain.message, plain.status, plain.retries, plain.cause]).toEqual(["DriverError", "DRIVER_ROUTE_FAILED", "m", null, 0, undefined]);
    const cause = new Error("c");
    const full = new DriverError("DRIVER_ROUTE_FAILED", "m", { status: 503, retries: 2, cause });
    expect([full.status, full.retries, full.cause]).toEqual([503, 2, cause]);
    expect(isDriverError(full)).toBe(true);
    expect(isDriverError({ code: "DRIVER_ROUTE_FAILED" })).toBe(false);
    expect(isDriverError(null)).toBe(false);
    expect(isDriverError("DriverError")).toBe(false);
  });
});

describe("sharedPrefixBytes", () => {
  it("counts shared bytes across the 8 KiB slices exactly", () => {
    const a = Buffer.alloc(3 * 8192 + 5, 0x61);
    for (const at of [0, 1, 8191, 8192, 8193, 16384, 3 * 8192, 3 * 8192 + 4]) {
      const b = Buffer.from(a);
      b[at] = 0x62;
      expect(sharedPrefixBytes(a, b)).toBe(at);
    }
    expect(sharedPrefixBytes(a, Buffer.from(a))).toBe(a.length);
    expect(sharedPrefixBytes(a, a.subarray(0, 8192))).toBe(8192);
    expect(sharedPrefixBytes(a.subarray(0, 8193), a)).toBe(8193);
    expect(sharedPrefixBytes(null, "abc")).toBe(0);
    expect(sharedPrefixBytes("é", "è")).toBe(1);
    expect(sharedPrefixBytes("abc", "abd")).toBe(2);
  });
});

describe("prefix helpers", () => {
  it("serializes one JSON line per message and digests the UTF-8 text", () => {
    expect(serializeMessages([{ a: 1 }, "x"])).toBe('{"a":1}\n"x"\n');
    expect(serializeMessages([])).toBe("");
    expect(bodyDigest("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(bodyDigest("\u00e9")).toBe(createHash("sha256").update(Buffer.from([0xc3, 0xa9])).digest("hex"));
    expect(bodyDigest("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });

  it("prefixView leaves every body but an anthropic one with a marked last block as it is", () => {
    const marked = { messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b", cache_control: { type: "ephemeral" } }] }] };
    expect(prefixView("anthropic", marked)).toEqual({ messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }] });
    expect(marked.messages[0]!.content[1]).toHaveProperty("cache_control");
    expect(prefixView("chat", marked)).toBe(marked);
    const empty = { messages: [] };
    expect(prefixView("anthropic", empty)).toBe(empty);
    const noList = { input: [] };
    expect(prefixView("anthropic", noList)).toBe(noList);
    const textContent = { messages: [{ role: "user", content: "plain" }] };
    expect(prefixView("anthropic", textContent)).toBe(textContent);
    const noBlocks = { messages: [{ role: "user", content: [] }] };
    expect(prefixView("anthropic", noBlocks)).toBe(noBlocks);
    const two = { system: "s", messages: [{ role: "user", content: [{ type: "text", text: "keep", cache_control: { type: "ephemeral" } }] }, { role: "assistant", content: [{ type: "text", text: "x", cache_control: {} }] }] };
    expect(prefixView("anthropic", two)).toEqual({ system: "s", messages: [two.messages[0], { role: "assistant", content: [{ type: "text", text: "x" }] }] });
  });

  it("bodyMessages reads messages, else input, else nothing", () => {
    expect(bodyMessages({ messages: [1], input: [2] })).toEqual([1]);
    expect(bodyMessages({ input: [2] })).toEqual([2]);
    expect(bodyMessages({})).toEqual([]);
  });
});

describe("composeFrontierBlock", () => {
  it("titles each section, says (none) for an empty one, ends every line once", () => {
    expect(composeFrontierBlock([{ title: "a", lines: [] }, { title: "b", lines: ["one", "two\n"] }])).toBe(
      "This transcript was folded: the records before this point are summarized by the host below; the records after it follow as they happened.\n## a\n(none)\n## b\none\ntwo\n",
    );
    expect(composeFrontierBlock([])).toBe("This transcript was folded: the records before this point are summarized by the host below; the records after it follow as they happened.\n");
  });
});

describe("render edges", () => {
  const T = Date.UTC(2026, 11, 1);
  const base = { execution_id: "e", status: "ok" as const, output: [], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T, ended_at_ms: T + 5 };

  it("a result record gets its newline, other streams are kept as they are; an error ends with one newline", () => {
    expect(renderCellResult({ ...base, output: [{ stream: "result", text: "1" }, { stream: "result", text: "2\n" }, { stream: "stdout", text: "no newline" }] })).toMatch(/\]\n1\n2\nno newline$/);
    expect(renderCellResult({ ...base, status: "error", error: "Boom" })).toMatch(/\]\nBoom\n\[status: error\]\n$/);
    expect(renderCellResult({ ...base, status: "error", error: "Boom\n" })).toMatch(/\]\nBoom\n\[status: error\]\n$/);
  });

  it("cut bytes only when some were cut; no duration before the cell ended", () => {
    expect(renderCellResult({ ...base, truncated_bytes: 1 })).toContain("[1 bytes of output were cut]\n");
    expect(renderCellResult(base)).not.toContain("cut");
    expect(renderCellResult({ ...base, ended_at_ms: null, status: "failed" })).not.toContain("ran");
    expect(renderCellResult({ ...base, ended_at_ms: T - 5 })).toContain("ran 0ms");
  });

  it("a turn ended by the operator says what was discarded; another reason reads generically", () => {
    expect(renderTurnEnd("operator_interrupted", T)).toBe(
      "[2026-12-01T00:00:00Z · turn ended: operator_interrupted]\nthe operator stopped this turn (a reply being written was discarded; a running cell was interrupted)\n",
    );
    expect(renderTurnEnd("host_restart", T)).toBe("[2026-12-01T00:00:00Z · turn ended: host_restart]\nthe host ended this turn\n");
  });
});
