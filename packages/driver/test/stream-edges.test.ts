import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, buildRequestBody, callRoute, parseRoute, type Route } from "../src/index.js";

// What callRoute does with streams a well-behaved server never sends (each refusal names what it
// got), and how it keeps one client per route, key and settings.
let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => server?.close());

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
function route(api: Route["api"], base_url = api === "anthropic" ? server.url : `${server.url}/v1`): Route {
  return parseRoute({ name: "edge", api, base_url, model: "m-1", api_key_env: null, context_tokens: 100_000 });
}
const body = (r: Route) => buildRequestBody(r, assembleMessages({ header: "h\n", frontier: null, records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text: "go" } } }] }));
/** SSE data lines with no event name (what the OpenAI wire sends). */
const data = (events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
/** SSE events under a name (what the Anthropic wire sends; the SDK skips unnamed ones). */
const named = (events: Array<[string, unknown]>) => events.map(([name, e]) => `event: ${name}\ndata: ${JSON.stringify(e)}\n\n`).join("");
const call = (r: Route, raw: string) => {
  server.push({ raw });
  return callRoute(r, body(r), { key: null, maxRetries: 0 });
};
const malformed = (message: string) => expect.objectContaining({ code: "DRIVER_MALFORMED_REPLY", message });
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: "c", object: "chat.completion.chunk", created: 1, model: "m-1", choices: [{ index: 0, delta, finish_reason: finish }] });

describe("chat streams refused", () => {
  it.each([5, null])("a chunk that is not an object (%s)", async (value) => {
    await expect(call(route("chat"), data([value]))).rejects.toThrow(malformed(`the chat stream sent a chunk that is not an object: ${value}`));
  });

  it("choices that are not an array", async () => {
    await expect(call(route("chat"), data([{ id: "c", choices: 5 }]))).rejects.toThrow(malformed("the chat stream sent choices that are not an array"));
  });

  it.each([
    ["no index", { id: "call_1", function: { name: "python", arguments: "" } }],
    ["index -1", { index: -1, id: "call_1", function: { name: "python", arguments: "" } }],
  ])("a tool call delta with %s", async (_what, piece) => {
    await expect(call(route("chat"), data([chunk({ tool_calls: [piece] })]))).rejects.toThrow(malformed(`the chat stream sent a tool call delta without an index: ${JSON.stringify(piece)}`));
  });

  it("ends without a single choice", async () => {
    await expect(call(route("chat"), data([{ id: "c", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }]))).rejects.toThrow(malformed("the chat stream ended without a single choice"));
  });

  it("a tool call that never got a name", async () => {
    const raw = data([chunk({ tool_calls: [{ index: 0, id: "call_1", function: { arguments: "{}" } }] }), chunk({}, "tool_calls")]);
    await expect(call(route("chat"), raw)).rejects.toThrow(malformed('the chat stream sent a tool call without an id or a name: {"id":"call_1","name":"","arguments":"{}"}'));
  });

  it("a tool call that never got an id", async () => {
    const raw = data([chunk({ tool_calls: [{ index: 0, function: { name: "python", arguments: "{}" } }] }), chunk({}, "tool_calls")]);
    await expect(call(route("chat"), raw)).rejects.toThrow(malformed('the chat stream sent a tool call without an id or a name: {"id":"","name":"python","arguments":"{}"}'));
  });
});

describe("chat streams read", () => {
  it("reads a call at index 1 whose first piece has no arguments, skips empty text, and keeps the finish reason past a later choice", async () => {
    const raw = data([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hi" }),
      chunk({ tool_calls: [{ index: 1, id: "call_1", type: "function", function: { name: "python" } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"code":"1"}' } }] }),
      chunk({}, "tool_calls"),
      chunk({}, null),
    ]);
    server.push({ raw });
    const r = route("chat");
    const deltas: unknown[] = [];
    const result = await callRoute(r, body(r), { key: null, maxRetries: 0, onDelta: (d) => deltas.push(d) });
    expect(result.reply).toEqual({ text: "Hi", calls: [{ id: "call_1", name: "python", arguments: '{"code":"1"}' }], stop: "tool_calls" });
    expect(deltas).toEqual([{ kind: "text", text: "Hi" }, { kind: "call", text: '{"code":"1"}' }]);
  });
});

describe("responses streams read", () => {
  it("reads text and argument deltas only (not other deltas, not a delta without text) and ends on response.incomplete", async () => {
    const item = { type: "function_call", call_id: "call_1", name: "python", arguments: '{"code":"1"}' };
    const raw = data([
      { type: "response.created", response: { status: "in_progress" } },
      { type: "response.output_text.delta", delta: "Hi" },
      { type: "response.output_text.delta" },
      { type: "response.reasoning_summary_text.delta", delta: "thinking" },
      { type: "response.function_call_arguments.delta", delta: '{"code":' },
      { type: "response.function_call_arguments.delta" },
      { type: "response.function_call_arguments.delta", delta: '"1"}' },
      { type: "response.output_item.done", item },
      { type: "response.incomplete", response: { status: "incomplete" } },
    ]);
    server.push({ raw });
    const r = route("responses");
    const deltas: unknown[] = [];
    const result = await callRoute(r, body(r), { key: null, maxRetries: 0, onDelta: (d) => deltas.push(d) });
    expect(result.reply).toEqual({ text: "Hi", calls: [{ id: "call_1", name: "python", arguments: '{"code":"1"}' }], stop: "incomplete" });
    expect(deltas).toEqual([{ kind: "text", text: "Hi" }, { kind: "call", text: '{"code":' }, { kind: "call", text: '"1"}' }]);
  });

  it("takes the event's type as the stop reason when the response has no status", async () => {
    const result = await call(route("responses"), data([{ type: "response.completed", response: {} }]));
    expect(result.reply).toEqual({ text: "", calls: [], stop: "response.completed" });
  });

  it("reads the scripted server's status as the stop reason", async () => {
    server.push({ text: "done" });
    const r = route("responses");
    expect((await callRoute(r, body(r), { key: null })).reply.stop).toBe("completed");
  });
});

describe.each(["chat", "responses", "anthropic"] as const)("a %s call with no onDelta", (api) => {
  it("streams its text and calls all the same", async () => {
    server.push({ text: "x", calls: [{ code: "1" }] });
    const r = route(api);
    const result = await callRoute(r, body(r), { key: null });
    expect([result.reply.text, result.reply.calls.map((c) => c.arguments)]).toEqual(["x", ['{"code":"1"}']]);
  });
});

describe("responses streams refused", () => {
  it("a stream that ends without response.completed", async () => {
    await expect(call(route("responses"), data([{ type: "response.created", response: {} }]))).rejects.toThrow(malformed("the responses stream ended without response.completed"));
  });

  it.each([{ sequence_number: 1 }, null, 5])("an event without a type (%j)", async (event) => {
    await expect(call(route("responses"), data([event]))).rejects.toThrow(malformed(`the responses stream sent an event without a type: ${JSON.stringify(event)}`));
  });

  it.each(["call_id", "name", "arguments"])("a function_call item without its %s", async (field) => {
    const item: Record<string, unknown> = { type: "function_call", call_id: "call_1", name: "python", arguments: "{}" };
    delete item[field];
    await expect(call(route("responses"), data([{ type: "response.output_item.done", item }]))).rejects.toThrow(
      malformed(`the responses stream sent a function_call item without call_id, name or arguments: ${JSON.stringify(item)}`),
    );
  });

  it.each(["response.failed", "error"])("a %s event, named and cut to 500 characters", async (type) => {
    const event = { type, response: { status: "failed" }, detail: "x".repeat(600) };
    await expect(call(route("responses"), data([event]))).rejects.toThrow(
      expect.objectContaining({ code: "DRIVER_ROUTE_FAILED", message: `the route reported ${type}: ${JSON.stringify(event).slice(0, 500)}` }),
    );
  });
});

describe("anthropic streams", () => {
  const start: [string, unknown] = ["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m-1", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }];
  const stop: Array<[string, unknown]> = [
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }],
    ["message_stop", { type: "message_stop" }],
  ];

  it("reads text a content block starts with, then its deltas (a block without text adds none)", async () => {
    const raw = named([
      start,
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hello" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: ", world" } }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text" } }],
      ...stop,
    ]);
    expect((await call(route("anthropic"), raw)).reply).toEqual({ text: "Hello, world", calls: [], stop: "end_turn" });
  });

  it.each([{ message: {} }, null, 5])("refuses an event without a type (%j)", async (event) => {
    await expect(call(route("anthropic"), named([["message_start", event]]))).rejects.toThrow(malformed(`the anthropic stream sent an event without a type: ${JSON.stringify(event)}`));
  });

  it("reads only text_delta as text and input_json_delta as arguments, keeps the stop reason past a delta without one", async () => {
    const raw = named([
      start,
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "future_delta", text: "x", partial_json: "y" } }],
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "python", input: {} } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"code":"1"}' } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta" } }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }],
      ["message_delta", { type: "message_delta", delta: {}, usage: { output_tokens: 3 } }],
      ["message_stop", { type: "message_stop" }],
    ]);
    server.push({ raw });
    const r = route("anthropic");
    const deltas: unknown[] = [];
    const result = await callRoute(r, body(r), { key: null, maxRetries: 0, onDelta: (d) => deltas.push(d) });
    expect(result.reply).toEqual({ text: "Hi", calls: [{ id: "toolu_1", name: "python", arguments: '{"code":"1"}' }], stop: "tool_use" });
    expect(deltas).toEqual([{ kind: "text", text: "Hi" }, { kind: "call", text: '{"code":"1"}' }]);
  });

  it("refuses a stream that ends without message_stop, whatever came before", async () => {
    const raw = named([
      start,
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "Hi" } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      stop[0]!,
    ]);
    await expect(call(route("anthropic"), raw)).rejects.toThrow(malformed("the anthropic stream ended without message_stop"));
  });

  it.each([0, 3])("refuses a delta for block %i, which never started", async (index) => {
    const raw = named([start, ["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "{}" } }]]);
    await expect(call(route("anthropic"), raw)).rejects.toThrow(malformed(`the anthropic stream sent a delta for block ${index} that never started`));
  });

  it("refuses a tool_use block without an id", async () => {
    const raw = named([start, ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", name: "python", input: {} } }], ...stop]);
    await expect(call(route("anthropic"), raw)).rejects.toThrow(malformed("the anthropic stream sent a tool_use block without an id or a name"));
  });

  it("fails on an error object in the stream, named and cut to 500 characters", async () => {
    const event = { type: "error", error: { type: "overloaded_error", message: "o".repeat(600) } };
    await expect(call(route("anthropic"), named([start, ["message_delta", event]]))).rejects.toThrow(
      expect.objectContaining({ code: "DRIVER_ROUTE_FAILED", message: `the route reported an error event: ${JSON.stringify(event).slice(0, 500)}` }),
    );
  });
});

describe("callRoute errors", () => {
  it("keeps the retries and the cause of a stream refused after a retry", async () => {
    server.push({ status: 503 }, { raw: data([5]) });
    const r = route("chat");
    const error = await callRoute(r, body(r), { key: null, maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "DRIVER_MALFORMED_REPLY", retries: 1, status: null, message: "the chat stream sent a chunk that is not an object: 5" });
    expect((error as Error).cause).toMatchObject({ code: "DRIVER_MALFORMED_REPLY", retries: 0 });
  });

  it("names a failure without a status by the error's name, not as HTTP", async () => {
    server.push({ drop: true }, { drop: true });
    const r = route("chat");
    const error = await callRoute(r, body(r), { key: null, maxRetries: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "DRIVER_ROUTE_FAILED", status: null, retries: 1 });
    const cause = (error as Error).cause as Error;
    expect((error as Error).message).toBe(`route "edge" failed after 1 retries: ${cause.name}: ${cause.message}`);
    expect(cause.name).not.toBe("");
  });

  it("gives up on an attempt that outlasts timeoutMs", async () => {
    server.push({ text: "never", gate: new Promise(() => {}) });
    const r = route("chat");
    await expect(callRoute(r, body(r), { key: null, maxRetries: 0, timeoutMs: 50 })).rejects.toThrow(
      expect.objectContaining({ code: "DRIVER_ROUTE_FAILED", status: null, message: expect.stringMatching(/^route "edge" failed after 0 retries: .*timed out/i) }),
    );
  });
});

// The client is made once per route kind, base URL, key, retry budget and timeout, and reads its
// environment (OPENAI_ORG_ID) when made: a request shows which client sent it.
describe("the client cache", () => {
  const ORG = "OPENAI_ORG_ID";
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env[ORG];
    delete process.env[ORG];
  });
  afterEach(() => {
    if (saved === undefined) delete process.env[ORG];
    else process.env[ORG] = saved;
  });
  const org = (i: number) => server.requests[i]!.headers["openai-organization"];

  it("reuses a client for the same settings, and makes another for another timeout", async () => {
    const r = route("chat");
    await callRoute(r, body(r), { key: "k1", timeoutMs: 60_000 });
    process.env[ORG] = "org-later";
    await callRoute(r, body(r), { key: "k1", timeoutMs: 60_000 });
    await callRoute(r, body(r), { key: "k1" });
    expect([org(0), org(1), org(2)]).toEqual([undefined, undefined, "org-later"]);
  });

  it("keeps an OpenAI and an Anthropic client apart on the same base URL", async () => {
    server.push({ text: "from chat" }, { text: "from anthropic" }, { text: "chat again" });
    const chat = route("chat", server.url);
    const messages = route("anthropic", server.url);
    expect((await callRoute(chat, body(chat), { key: "k2" })).reply.text).toBe("from chat");
    expect((await callRoute(messages, body(messages), { key: "k2" })).reply.text).toBe("from anthropic");
    expect((await callRoute(chat, body(chat), { key: "k2" })).reply.text).toBe("chat again");
    expect(server.requests.map((q) => q.path)).toEqual(["/chat/completions", "/v1/messages", "/chat/completions"]);
  });

  it("keeps 32 clients: the oldest is dropped when a 33rd is made, the newer ones are reused", async () => {
    const r = route("chat");
    const send = (key: string) => callRoute(r, body(r), { key, maxRetries: 0 });
    await send("first");
    await send("second");
    for (let i = 0; i < 31; i++) await send(`other-${i}`);
    process.env[ORG] = "org-later";
    const before = server.requests.length;
    await send("second");
    await send("first");
    expect([org(before), org(before + 1)]).toEqual([undefined, "org-later"]);
  });
});

describe("chat chunks without choices", () => {
  it("reads a chunk that carries no choices (a usage-only chunk) as nothing, not as malformed", async () => {
    const usageOnly = { id: "c", object: "chat.completion.chunk", created: 1, model: "m-1", usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
    const result = await call(route("chat"), data([chunk({ content: "Hi" }, "stop"), usageOnly]));
    expect(result.reply).toEqual({ text: "Hi", calls: [], stop: "stop" });
  });
});

describe("anthropic usage", () => {
  it("refuses usage that reads as another API's, even before message_start", async () => {
    const raw = named([
      ["message_start", { type: "response.completed", response: { usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } } }],
      ["message_stop", { type: "message_stop" }],
    ]);
    await expect(call(route("anthropic"), raw)).rejects.toThrow(
      expect.objectContaining({ code: "DRIVER_ROUTE_FAILED", message: expect.stringContaining("chunk[0].response.usage reads as openai_responses but the stream is anthropic") }),
    );
  });
});

describe("anthropic content blocks", () => {
  it("reads text only from a text block, not from a tool_use block that carries a text field", async () => {
    const raw = named([
      ["message_start", { type: "message_start", message: { id: "m", type: "message", role: "assistant", content: [], model: "m-1", usage: { input_tokens: 1, output_tokens: 1 } } }],
      ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "python", input: {}, text: "stray" } }],
      ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"code":"1"}' } }],
      ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } }],
      ["message_stop", { type: "message_stop" }],
    ]);
    expect((await call(route("anthropic"), raw)).reply).toEqual({ text: "", calls: [{ id: "toolu_1", name: "python", arguments: '{"code":"1"}' }], stop: "tool_use" });
  });

  const opened = (blocks: Array<[number, Record<string, unknown>]>) =>
    named([
      ["message_start", { type: "message_start", message: { id: "m", type: "message", role: "assistant", content: [], model: "m-1", usage: { input_tokens: 1, output_tokens: 1 } } }],
      ...blocks.map(([index, content_block]): [string, unknown] => ["content_block_start", { type: "content_block_start", index, content_block }]),
      ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }],
      ["message_stop", { type: "message_stop" }],
    ]);

  it("reads blocks whose indexes skip some (no block 0)", async () => {
    const raw = opened([[1, { type: "text", text: "Hi" }], [3, { type: "tool_use", id: "toolu_1", name: "python", input: {} }]]);
    expect((await call(route("anthropic"), raw)).reply).toEqual({ text: "Hi", calls: [{ id: "toolu_1", name: "python", arguments: "{}" }], stop: "end_turn" });
  });

  it("refuses a tool_use block without a name", async () => {
    await expect(call(route("anthropic"), opened([[0, { type: "tool_use", id: "toolu_1", input: {} }]]))).rejects.toThrow(malformed("the anthropic stream sent a tool_use block without an id or a name"));
  });
});

describe("chat tool calls by index", () => {
  it("orders calls by index whatever order they start in, and keeps indexes past 2^32 - 2 (regression: they were dropped, or walked)", async () => {
    const indexes = [10, 2, 4294967294, 0, 2 ** 32, Number.MAX_SAFE_INTEGER];
    const raw = data([
      ...indexes.map((index) => chunk({ tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name: "python", arguments: "" } }] })),
      ...indexes.map((index) => chunk({ tool_calls: [{ index, function: { arguments: `{"code":"${index}"}` } }] })),
      chunk({}, "tool_calls"),
    ]);
    const { reply } = await call(route("chat"), raw);
    expect(reply.calls).toEqual([...indexes].sort((a, b) => a - b).map((index) => ({ id: `call_${index}`, name: "python", arguments: `{"code":"${index}"}` })));
  });
});
