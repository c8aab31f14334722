import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, bodyDigest, buildRequestBody, callRoute, parseRoute, serializeBody, type Route } from "../src/index.js";

let server: ScriptedServer;
afterEach(async () => server?.close());

function route(api: Route["api"], extra: Record<string, unknown> = {}): Route {
  const base_url = api === "anthropic" ? server.url : `${server.url}/v1`;
  return parseRoute({ name: "scripted", api, base_url, model: "m-1", api_key_env: null, context_tokens: 100_000, ...extra });
}

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
const body = (r: Route, text = "hello") =>
  buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text } } }] }));

describe.each(["chat", "responses", "anthropic"] as const)("callRoute over %s", (api) => {
  beforeEach(async () => {
    server = await startScriptedServer();
  });

  it("streams text and tool-call deltas into one reply, and sends exactly the assembled body", async () => {
    server.push({ text: "Let me check the files in this directory.", calls: [{ code: "import os\nsorted(os.listdir('.'))" }, { code: "1 + 1" }] });
    const r = route(api);
    const b = body(r);
    const deltas: string[] = [];
    const result = await callRoute(r, b, { key: "sk-test", onDelta: (d) => deltas.push(d.kind) });
    expect(result.reply.text).toBe("Let me check the files in this directory.");
    expect(result.reply.calls.map((c) => [c.name, JSON.parse(c.arguments).code])).toEqual([["python", "import os\nsorted(os.listdir('.'))"], ["python", "1 + 1"]]);
    expect(result.reply.calls.every((c) => c.id.length > 0)).toBe(true);
    expect(deltas).toContain("text");
    expect(deltas).toContain("call");
    expect(result.retries).toBe(0);
    // The bytes on the wire are the assembled body, serialized: the digest on a row is reproducible.
    expect(server.requests[0]!.body).toBe(serializeBody(b));
    expect(bodyDigest(result.sent!)).toBe(bodyDigest(serializeBody(b)));
  });

  it("sends the body's text as given (no second serialization): the same bytes and content type as the client's own", async () => {
    server.push({ text: "one" }, { text: "two" }, { text: "three" });
    const r = route(api);
    const b = body(r);
    const own = await callRoute(r, b, { key: null });
    const text = serializeBody(b);
    const given = await callRoute(r, b, { key: null, text });
    expect(given.sent).toBe(text);
    expect(server.requests[1]!.body).toBe(server.requests[0]!.body);
    expect(own.sent).toBe(given.sent);
    const type = (i: number) => Object.entries(server.requests[i]!.headers).filter(([k]) => k.toLowerCase() === "content-type");
    expect(type(1)).toEqual(type(0));
    // The text is what goes out, byte for byte: an equivalent JSON spelled otherwise is not re-serialized.
    const spaced = JSON.stringify(b, null, 1);
    const third = await callRoute(r, b, { key: null, text: spaced });
    expect(server.requests[2]!.body).toBe(spaced);
    expect(third.sent).toBe(spaced);
    // A retried attempt sends the same text again.
    server.push({ status: 503 }, { text: "four" });
    const fourth = await callRoute(r, b, { key: null, text });
    expect(fourth.retries).toBe(1);
    expect(server.requests.slice(3).map((q) => q.body)).toEqual([text, text]);
  });

  it("keeps the model the reply named (C18 response model), and null when it names none", async () => {
    await server.close();
    server = await startScriptedServer({ responseModel: "m-1-2026-12-01" });
    server.push({ text: "named", calls: [{ code: "1" }] });
    const r = route(api);
    const result = await callRoute(r, body(r), { key: null });
    expect(result.model).toBe("m-1-2026-12-01");
    expect(JSON.parse(server.requests[0]!.body).model).toBe("m-1");
    await server.close();
    server = await startScriptedServer({ responseModel: null });
    server.push({ text: "anonymous" });
    const none = await callRoute(route(api), body(r), { key: null });
    expect(none.reply.text).toBe("anonymous");
    expect(none.model).toBeNull();
  });

  it("reports cache figures in the route's own shape from the shared prefix", async () => {
    server.push({ text: "one" }, { text: "two" });
    const r = route(api);
    const first = await callRoute(r, body(r, "a"), { key: null });
    const second = await callRoute(r, body(r, "a much longer message that extends"), { key: null });
    const shared = server.requests[1]!.shared_prefix_bytes;
    expect(shared).toBeGreaterThan(50);
    expect(second.usage!.cached_prompt_tokens).toBe(Math.floor(shared / 4));
    expect(second.usage!.shape).toBe({ chat: "openai_chat", responses: "openai_responses", anthropic: "anthropic" }[api]);
    expect(first.usage!.cached_prompt_tokens).toBe(0);
  });

  it("retries 429 and 503 with the client's backoff and counts them", async () => {
    server.push({ status: 429 }, { status: 503 }, { text: "ok" });
    const r = route(api);
    const result = await callRoute(r, body(r), { key: null });
    expect(result.reply.text).toBe("ok");
    expect(result.retries).toBe(2);
    expect(server.requests).toHaveLength(3);
  });

  it("gives up after the retry budget with DRIVER_ROUTE_FAILED naming the status and the retries", async () => {
    server.push({ status: 500 }, { status: 500 }, { status: 500 });
    const r = route(api);
    await expect(callRoute(r, body(r), { key: null, maxRetries: 2 })).rejects.toMatchObject({ code: "DRIVER_ROUTE_FAILED", status: 500, retries: 2, message: expect.stringContaining("HTTP 500") });
  });

  it("refuses a malformed stream with DRIVER_MALFORMED_REPLY", async () => {
    server.push({ raw: "data: {not json\n\n" });
    const r = route(api);
    await expect(callRoute(r, body(r), { key: null, maxRetries: 0 })).rejects.toMatchObject({ code: "DRIVER_MALFORMED_REPLY" });
  });

  it("refuses a stream that ends before the reply is complete", async () => {
    server.push({ raw: api === "chat" ? "data: [DONE]\n\n" : 'event: ping\ndata: {"type":"ping"}\n\n' });
    const r = route(api);
    await expect(callRoute(r, body(r), { key: null, maxRetries: 0 })).rejects.toMatchObject({ code: "DRIVER_MALFORMED_REPLY" });
  });
});

describe("usage shapes of chat routes", () => {
  it("reads DeepSeek's prompt_cache_hit_tokens", async () => {
    server = await startScriptedServer({ chatUsage: "deepseek" });
    server.push({ text: "a" }, { text: "b" });
    const r = route("chat");
    await callRoute(r, body(r), { key: null });
    const second = await callRoute(r, body(r, "hello again"), { key: null });
    expect(second.usage).toMatchObject({ shape: "deepseek", cached_prompt_tokens: Math.floor(server.requests[1]!.shared_prefix_bytes / 4) });
    expect(second.usage!.uncached_prompt_tokens).toBe(second.usage!.prompt_tokens! - second.usage!.cached_prompt_tokens!);
  });

  it("keeps usage absent when the route reports none", async () => {
    server = await startScriptedServer({ chatUsage: "none" });
    server.push({ text: "a" });
    const r = route("chat");
    expect((await callRoute(r, body(r), { key: null })).usage).toBeNull();
  });

  it("counts a dropped connection as a retry and fails when the route stays down", async () => {
    server = await startScriptedServer();
    server.push({ drop: true }, { text: "back" });
    const r = route("chat");
    expect(await callRoute(r, body(r), { key: null })).toMatchObject({ retries: 1, reply: { text: "back" } });
    const down = parseRoute({ name: "down", api: "chat", base_url: "http://127.0.0.1:9/v1", model: "m", api_key_env: null, context_tokens: 1000 });
    await expect(callRoute(down, body(down), { key: null, maxRetries: 1 })).rejects.toMatchObject({ code: "DRIVER_ROUTE_FAILED", retries: 1 });
  });

  it("sends the key the route read, as a bearer token", async () => {
    server = await startScriptedServer();
    server.push({ text: "a" });
    const r = route("chat");
    await callRoute(r, body(r), { key: "sk-secret" });
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-secret");
  });
});

// Issue 27: what a real OpenAI-compatible server (llama.cpp's) does that the OpenAI wire does not.
describe("chat routes against llama.cpp-like servers", () => {
  it("reads a tool-call name repeated in every delta as that name, not the names appended", async () => {
    server = await startScriptedServer({ repeatToolNames: true });
    server.push({ calls: [{ code: "print('a fairly long cell, streamed in several pieces')" }, { code: "2 + 2" }] });
    const r = route("chat", { cells: "tool" });
    const result = await callRoute(r, body(r), { key: null });
    expect(result.reply.calls.map((c) => c.name)).toEqual(["python", "python"]);
    expect(JSON.parse(result.reply.calls[0]!.arguments).code).toBe("print('a fairly long cell, streamed in several pieces')");
    // The server did repeat it: more deltas carried the name than there were calls.
    server.push({ calls: [{ code: "print('a fairly long cell, streamed in several pieces')" }] });
    const raw = await (await fetch(`${server.url}/v1/chat/completions`, { method: "POST", body: serializeBody(body(r)) })).text();
    expect(raw.split('"name":"python"').length - 1).toBeGreaterThan(2);
  });

  it("still appends a name streamed in pieces", async () => {
    const { accumulateName } = await import("../src/call.js");
    expect(["py", "thon"].reduce(accumulateName, "")).toBe("python");
    expect(["python", "python", "python"].reduce(accumulateName, "")).toBe("python");
    expect(["py", "python", ""].reduce(accumulateName, "")).toBe("python");
  });

  it("sends an assistant turn with calls and no text with content \"\" (never null, never missing), which llama.cpp's server takes", async () => {
    server = await startScriptedServer({ repeatToolNames: true, refuseNullContent: true });
    server.push({ calls: [{ code: "1 + 1" }] }, { text: "two" });
    const r = route("chat", { cells: "tool" });
    const first = await callRoute(r, body(r), { key: null });
    const call = first.reply.calls[0]!;
    const messages = assembleMessages({
      header: "You are klbr.\n",
      frontier: null,
      records: [
        { seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text: "hello" } } },
        { seq: 2, kind: "reply", request_id: "req-1", reply: first.reply },
        {
          seq: 3,
          kind: "cell",
          request_id: "req-1",
          call_id: call.id,
          result: { execution_id: "ex-1", status: "ok", output: [{ stream: "stdout", text: "2\n" }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T, ended_at_ms: T + 5 },
        },
      ],
    });
    const next = buildRequestBody(r, messages);
    const assistant = (next.messages as Array<Record<string, unknown>>).find((m) => m.role === "assistant")!;
    expect(assistant.content).toBe("");
    expect(assistant.tool_calls).toHaveLength(1);
    const second = await callRoute(r, next, { key: null, maxRetries: 0 });
    expect(second.reply.text).toBe("two");
    // The first request is a byte prefix of the second up to its closing brackets (prefix stability).
    const a = serializeBody(body(r));
    expect(serializeBody(next).startsWith(a.slice(0, a.length - 2))).toBe(true);
  });
});
