// callRoute keeps one SDK client per route and key (made once, not per call): what each call
// reports must still be its own (issue 27's host overhead per step).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, buildRequestBody, callRoute, parseRoute, serializeBody, type Route } from "../src/index.js";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => server?.close());

function route(api: Route["api"]): Route {
  return parseRoute({ name: "shared", api, base_url: api === "anthropic" ? server.url : `${server.url}/v1`, model: "m-1", api_key_env: null, context_tokens: 100_000 });
}

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
const body = (r: Route, text: string) =>
  buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text } } }] }));

describe.each(["chat", "responses", "anthropic"] as const)("callRoute's shared %s client", (api) => {
  it("counts each call's own retries and keeps each call's own body when two calls run at once", async () => {
    // Whichever request arrives first is refused once; the other is answered at once.
    server.push({ status: 429 }, { text: "one" }, { text: "two" });
    const r = route(api);
    const a = body(r, "first call");
    const b = body(r, "second call, a longer body than the first");
    const [ra, rb] = await Promise.all([callRoute(r, a, { key: null }), callRoute(r, b, { key: null })]);
    expect([ra.retries, rb.retries].sort()).toEqual([0, 1]);
    expect(ra.sent).toBe(serializeBody(a));
    expect(rb.sent).toBe(serializeBody(b));
    expect(server.requests).toHaveLength(3);
  });

  it("sends the key read for this call, not the one an earlier call on the route read", async () => {
    server.push({ text: "a" }, { text: "b" });
    const r = route(api);
    await callRoute(r, body(r, "x"), { key: "sk-first" });
    await callRoute(r, body(r, "x"), { key: "sk-second" });
    // Whichever header the SDK carries the key in (authorization, x-api-key).
    const headers = (i: number) => JSON.stringify(server.requests[i]!.headers);
    expect(headers(0)).toContain("sk-first");
    expect(headers(1)).toContain("sk-second");
    expect(headers(1)).not.toContain("sk-first");
  });
});

// The chat reply's SSE body is read by the driver (readSseEvents), not the SDK's stream: what a
// local server sends must still read the way the SDK read it.
describe("a chat stream as llama.cpp's server frames it", () => {
  let raw: Server | null = null;
  afterEach(async () => {
    await new Promise<void>((resolve) => (raw ? raw.close(() => resolve()) : resolve()));
    raw = null;
  });

  async function serve(events: string[]): Promise<Route> {
    raw = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (const e of events) res.write(e);
        res.end();
      });
    });
    await new Promise<void>((resolve) => raw!.listen(0, "127.0.0.1", () => resolve()));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/v1`;
    return parseRoute({ name: "llama", api: "chat", base_url: url, model: "m", api_key_env: null, context_tokens: 100_000 });
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\r\n\r\n`;

  it("reads CRLF events between `: ping` comments, a repeated name, and nothing after [DONE]", async () => {
    const call = (args: string) => ({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "python", arguments: args } }] });
    const r = await serve([": ping - 2026-12-02 03:16:57\r\n\r\n", chunk({ role: "assistant", content: null }), chunk(call('{"code": ')), ": ping\r\n\r\n", chunk(call('"1 + 1"}')), chunk({}, "tool_calls"), "data: [DONE]\r\n\r\n", "data: not json\r\n\r\n"]);
    const deltas: string[] = [];
    const result = await callRoute(r, body(r, "x"), { key: null, onDelta: (d) => deltas.push(d.text) });
    expect(result.reply).toEqual({ text: "", calls: [{ id: "call_1", name: "python", arguments: '{"code": "1 + 1"}' }], stop: "tool_calls" });
    expect(deltas).toEqual(['{"code": ', '"1 + 1"}']);
    expect(result.usage).toBeNull();
  });

  it("fails with DRIVER_ROUTE_FAILED on an error chunk, and DRIVER_MALFORMED_REPLY on a chunk that is not JSON", async () => {
    const failing = await serve([chunk({ content: "a" }), `data: ${JSON.stringify({ error: { message: "context overflow" } })}\n\n`]);
    await expect(callRoute(failing, body(failing, "x"), { key: null, maxRetries: 0 })).rejects.toMatchObject({ code: "DRIVER_ROUTE_FAILED", message: expect.stringContaining("context overflow") });
    await new Promise<void>((resolve) => raw!.close(() => resolve()));
    const garbled = await serve([chunk({ content: "a" }), "data: {not json\n\n"]);
    await expect(callRoute(garbled, body(garbled, "x"), { key: null, maxRetries: 0 })).rejects.toMatchObject({ code: "DRIVER_MALFORMED_REPLY" });
  });
});
