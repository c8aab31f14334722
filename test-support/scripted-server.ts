// A scripted model server on 127.0.0.1 for tests and benchmarks: a real node:http server speaking
// the real wire formats (OpenAI chat completions and Responses, Anthropic messages), streaming
// (SSE, tool-call deltas included), replaying scripted replies in order, and reporting usage with
// cache figures computed from the longest common prefix with the previous request's body, in
// each provider's own shape.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A scripted tool call: raw arguments, or `code` (sent as `{"code": ...}`). */
export type ScriptCall = { name?: string; arguments: string } | { name?: string; code: string };

/** One scripted answer, used by the next request that arrives. */
export type ScriptStep =
  | { text?: string; calls?: ScriptCall[]; gate?: Promise<unknown> }
  | { status: number; body?: string; retryAfterMs?: number }
  | { raw: string; contentType?: string }
  | { drop: true };

/** The usage shape a chat completions route reports (Responses and Anthropic have their own). */
export type ChatUsageShape = "openai" | "deepseek" | "none";

/** A request the server received: the exact body bytes and where it came. */
export interface Received {
  path: string;
  body: string;
  json: Record<string, unknown> | null;
  headers: IncomingMessage["headers"];
  /** The bytes this body shared with the previous body (what the cache figures were computed from). */
  shared_prefix_bytes: number;
}

/** The running server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` (Anthropic base URL); OpenAI routes use `${url}/v1`. */
  readonly url: string;
  readonly requests: Received[];
  /** Append steps to the script. */
  push(...steps: ScriptStep[]): void;
  /** Steps not yet used. */
  pending(): number;
  close(): Promise<void>;
}

/** Options of startScriptedServer. */
export interface ScriptedServerOptions {
  chatUsage?: ChatUsageShape;
  /** What a request gets when the script is exhausted: a text reply with no cell (default) or an error status. */
  whenExhausted?: ScriptStep;
  /** Bytes per token in the reported figures (default 4). */
  bytesPerToken?: number;
  /**
   * Chat only: repeat the whole function name in every tool-call delta, as llama.cpp's server
   * (and others) do; the OpenAI wire sends it once.
   */
  repeatToolNames?: boolean;
  /**
   * Chat only: refuse (HTTP 500, without using a script step) a request with an assistant
   * message whose `content` is `null` or missing, as llama.cpp's server does: its schema refuses
   * null, and its chatml-function-calling template fails on a missing key.
   */
  refuseNullContent?: boolean;
  /**
   * The model the replies name (a dated snapshot of the requested one, as real routes answer);
   * default: the model the request asked for; null: the replies leave the field out.
   */
  responseModel?: string | null;
}

/** The index of the first chat message that is an assistant turn with `"content": null` or no content, or -1. */
function nullContentAt(json: Record<string, unknown> | null): number {
  const messages = Array.isArray(json?.messages) ? (json.messages as Array<Record<string, unknown>>) : [];
  return messages.findIndex((m) => m?.role === "assistant" && (!("content" in m) || m.content === null));
}

function lcp(a: Buffer | null, b: Buffer): number {
  if (!a) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Start a scripted server on an ephemeral loopback port. */
export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const script: ScriptStep[] = [];
  const requests: Received[] = [];
  const bpt = options.bytesPerToken ?? 4;
  let previous: Buffer | null = null;
  let ids = 0;
  const sockets = new Set<import("node:net").Socket>();
  /** The `model` field of a reply to this body: `{ model }`, or nothing when the server names none. */
  const named = (body: Record<string, unknown> | null): { model?: string } => {
    if (options.responseModel === null) return {};
    return { model: options.responseModel ?? String(body?.model ?? "scripted") };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => void answer(req, res, Buffer.concat(chunks)).catch(() => res.destroy()));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function answer(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    const path = (req.url ?? "").split("?")[0]!;
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    } catch {
      json = null;
    }
    if (options.refuseNullContent && path.endsWith("/chat/completions") && nullContentAt(json) >= 0) {
      requests.push({ path, body: raw.toString("utf8"), json, headers: req.headers, shared_prefix_bytes: lcp(previous, raw) });
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `messages.${nullContentAt(json)}.content: Input should be a valid string`, type: "internal_server_error" } }));
      return;
    }
    const shared = lcp(previous, raw);
    previous = raw;
    requests.push({ path, body: raw.toString("utf8"), json, headers: req.headers, shared_prefix_bytes: shared });
    const step = script.shift() ?? options.whenExhausted ?? { text: "(script exhausted)" };
    if ("drop" in step) {
      req.socket.destroy();
      return;
    }
    if ("status" in step) {
      res.writeHead(step.status, { "content-type": "application/json", "retry-after-ms": String(step.retryAfterMs ?? 1) });
      res.end(step.body ?? JSON.stringify({ error: { message: `scripted ${step.status}`, type: "scripted" } }));
      return;
    }
    if ("raw" in step) {
      res.writeHead(200, { "content-type": step.contentType ?? "text/event-stream" });
      res.end(step.raw);
      return;
    }
    if (step.gate) await step.gate;
    const prompt = Math.ceil(raw.length / bpt);
    const cached = Math.floor(shared / bpt);
    const calls = (step.calls ?? []).map((c) => ({ name: c.name ?? "python", arguments: "code" in c ? JSON.stringify({ code: c.code }) : c.arguments }));
    const text = step.text ?? "";
    const completion = Math.max(1, Math.ceil((text.length + calls.reduce((n, c) => n + c.arguments.length, 0)) / bpt));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (event: string | null, data: unknown) => res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    if (path.endsWith("/chat/completions")) chat(send, json, text, calls, prompt, cached, completion);
    else if (path.endsWith("/responses")) responses(send, json, text, calls, prompt, cached, completion);
    else if (path.endsWith("/messages")) anthropic(send, json, text, calls, prompt, cached, completion);
    else {
      res.end();
      return;
    }
    res.end();
  }

  type Send = (event: string | null, data: unknown) => void;
  type Call = { name: string; arguments: string };

  function chat(send: Send, body: Record<string, unknown> | null, text: string, calls: Call[], prompt: number, cached: number, completion: number) {
    const id = `chatcmpl-${++ids}`;
    const base = { id, object: "chat.completion.chunk", created: 1_790_000_000, ...named(body) };
    send(null, { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
    for (const piece of pieces(text)) send(null, { ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    calls.forEach((call, index) => {
      send(null, { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: `call_${++ids}`, type: "function", function: { name: call.name, arguments: "" } }] }, finish_reason: null }] });
      const name = options.repeatToolNames ? { name: call.name } : {};
      for (const piece of pieces(call.arguments, 11)) send(null, { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { ...name, arguments: piece } }] }, finish_reason: null }] });
    });
    send(null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }] });
    const shape = options.chatUsage ?? "openai";
    const wantsUsage = (body?.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (shape !== "none" && wantsUsage) {
      const usage =
        shape === "deepseek"
          ? { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_cache_hit_tokens: cached, prompt_cache_miss_tokens: prompt - cached }
          : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } };
      send(null, { ...base, choices: [], usage });
    }
    send(null, "[DONE]");
  }

  function responses(send: Send, body: Record<string, unknown> | null, text: string, calls: Call[], prompt: number, cached: number, completion: number) {
    const id = `resp_${++ids}`;
    const model = named(body);
    const output: unknown[] = [];
    let seq = 0;
    const ev = (type: string, data: Record<string, unknown>) => send(type, { type, sequence_number: seq++, ...data });
    ev("response.created", { response: { id, object: "response", status: "in_progress", ...model, output: [] } });
    let index = 0;
    if (text !== "") {
      const itemId = `msg_${++ids}`;
      ev("response.output_item.added", { output_index: index, item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] } });
      for (const piece of pieces(text)) ev("response.output_text.delta", { item_id: itemId, output_index: index, content_index: 0, delta: piece });
      const item = { id: itemId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
      ev("response.output_item.done", { output_index: index, item });
      output.push(item);
      index++;
    }
    for (const call of calls) {
      const itemId = `fc_${++ids}`;
      const callId = `call_${++ids}`;
      ev("response.output_item.added", { output_index: index, item: { id: itemId, type: "function_call", call_id: callId, name: call.name, arguments: "", status: "in_progress" } });
      for (const piece of pieces(call.arguments, 11)) ev("response.function_call_arguments.delta", { item_id: itemId, output_index: index, delta: piece });
      const item = { id: itemId, type: "function_call", call_id: callId, name: call.name, arguments: call.arguments, status: "completed" };
      ev("response.output_item.done", { output_index: index, item });
      output.push(item);
      index++;
    }
    const usage = { input_tokens: prompt, input_tokens_details: { cached_tokens: cached }, output_tokens: completion, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: prompt + completion };
    ev("response.completed", { response: { id, object: "response", status: "completed", ...model, output, usage } });
  }

  function anthropic(send: Send, body: Record<string, unknown> | null, text: string, calls: Call[], prompt: number, cached: number, completion: number) {
    const model = named(body);
    send("message_start", {
      type: "message_start",
      message: { id: `msg_${++ids}`, type: "message", role: "assistant", ...model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: prompt - cached, cache_creation_input_tokens: 0, cache_read_input_tokens: cached, output_tokens: 1 } },
    });
    let index = 0;
    if (text !== "") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const piece of pieces(text)) send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
      send("content_block_stop", { type: "content_block_stop", index });
      index++;
    }
    for (const call of calls) {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: `toolu_${++ids}`, name: call.name, input: {} } });
      for (const piece of pieces(call.arguments, 11)) send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } });
      send("content_block_stop", { type: "content_block_stop", index });
      index++;
    }
    send("message_delta", { type: "message_delta", delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: completion } });
    send("message_stop", { type: "message_stop" });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    push: (...steps) => void script.push(...steps),
    pending: () => script.length,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
