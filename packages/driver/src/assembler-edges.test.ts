import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestAssembler } from "./assembler.js";
import { bodyDigest, sharedPrefixBytes } from "./prefix.js";
import type { TranscriptRecord } from "./records.js";
import { parseRoute, type Route } from "./routes.js";

// RequestAssembler's shared-prefix figure without reading the texts (consecutive bodies of one
// assembler), its two-body memory, and the body guard a hand-made route can reach.
const T = Date.UTC(2026, 11, 1);
const input = (seq: number, text = `step ${seq} é`): TranscriptRecord => ({ seq, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text } } });
const routeOf = (api: Route["api"]) => parseRoute({ name: "r", api, base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null, context_tokens: 1000 });

/** The figure, and whether computing it read a text (the general measure turns both texts into Buffers). */
function measured(assembler: RequestAssembler, previous: string | null, body: ReturnType<RequestAssembler["body"]>) {
  const from = vi.spyOn(Buffer, "from");
  try {
    const bytes = assembler.sharedPrefixBytes(previous, body);
    return { bytes, read: from.mock.calls.length > 0 };
  } finally {
    from.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(["chat", "responses", "anthropic"] as const)("RequestAssembler.sharedPrefixBytes (%s)", (api) => {
  it("knows the figure against the body given just before, asked for twice, without reading either text", () => {
    const assembler = new RequestAssembler(routeOf(api), "header\n", null);
    assembler.append([input(1)]);
    const first = assembler.body();
    assembler.append([input(2)]);
    assembler.body();
    const second = assembler.body();
    const fast = measured(assembler, first.prefixText, second);
    expect(fast).toEqual({ bytes: sharedPrefixBytes(first.prefixText, second.prefixText), read: false });
    // The first body's text up to its closing "]}" is where the second goes on.
    expect(fast.bytes).toBe(Buffer.byteLength(first.prefixText, "utf8") - 2);
  });

  it("knows a body against its own text without reading it, even when it is the only body given", () => {
    const assembler = new RequestAssembler(routeOf(api), "header\n", null);
    assembler.append([input(1)]);
    const only = assembler.body();
    expect(measured(assembler, only.prefixText, only)).toEqual({ bytes: Buffer.byteLength(only.prefixText, "utf8"), read: false });
  });

  it("keeps the two latest bodies only: a text from before them is compared byte by byte, and right", () => {
    const assembler = new RequestAssembler(routeOf(api), "header\n", null);
    assembler.append([input(1)]);
    const first = assembler.body();
    assembler.append([input(2)]);
    assembler.body();
    assembler.append([input(3)]);
    const third = assembler.body();
    expect(measured(assembler, first.prefixText, third)).toEqual({ bytes: sharedPrefixBytes(first.prefixText, third.prefixText), read: true });
  });

  it("measures a body that is not the latest, or another assembler's, byte by byte", () => {
    const assembler = new RequestAssembler(routeOf(api), "header\n", null);
    assembler.append([input(1)]);
    const first = assembler.body();
    assembler.append([input(2)]);
    const second = assembler.body();
    // first against itself, once second was given: the whole of first, not where second went on.
    expect(measured(assembler, first.prefixText, first)).toEqual({ bytes: Buffer.byteLength(first.prefixText, "utf8"), read: true });
    // An assembler that gave no body yet measures any body the general way.
    const fresh = new RequestAssembler(routeOf(api), "header\n", null);
    expect(measured(fresh, first.prefixText, second)).toEqual({ bytes: sharedPrefixBytes(first.prefixText, second.prefixText), read: true });
    expect(measured(fresh, null, second)).toEqual({ bytes: 0, read: false });
  });
});

describe("RequestAssembler bodies", () => {
  it("gives an anthropic body with no message the digest and size of its text", () => {
    const body = new RequestAssembler(routeOf("anthropic"), "header é\n", null).body();
    expect(JSON.parse(body.text).messages).toEqual([]);
    expect(body.digest).toBe(bodyDigest(body.text));
    expect(body.bytes).toBe(Buffer.byteLength(body.text, "utf8"));
  });

  it.each([
    ["chat", "messages"],
    ["responses", "input"],
    ["anthropic", "messages"],
  ] as const)("refuses a hand-made %s route whose options set %s (the messages would not come last)", (api, key) => {
    const route = { ...routeOf(api), options: { [key]: [] } };
    expect(() => new RequestAssembler(route, "h\n", null)).toThrow(expect.objectContaining({ code: "DRIVER_INVALID_RECORD", message: "the request body does not end with its messages" }));
  });
});
