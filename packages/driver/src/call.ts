import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { createUsageStreamReader, type UsageRecord } from "@klbr/usage";
import { DriverError, isDriverError } from "./errors.js";
import type { ModelReply, ToolCall } from "./records.js";
import type { Route } from "./routes.js";
import type { RequestBody } from "./wire.js";

/** What a route call returns: the reply as received, the usage as reported, and what the call cost. */
export interface RouteCallResult {
  reply: ModelReply;
  /** The usage record, or null when the route reported no usage at all. */
  usage: UsageRecord | null;
  /** The model the reply named (chat chunks' `model`, the Responses `response.model`, Anthropic's `message.model`); null when it named none. */
  model: string | null;
  /** Transport retries the client made (429, 5xx, connection errors). */
  retries: number;
  /** The exact body the client sent (the last attempt's). */
  sent: string | null;
}

/** How a call is made. */
export interface RouteCallOptions {
  /** The key read from the route's variable (null: the route needs none). */
  key: string | null;
  signal?: AbortSignal;
  /** The client's retry budget; the SDKs default to 2. */
  maxRetries?: number;
  /** Each text or argument piece as it streams in, for a live view. */
  onDelta?: (delta: { kind: "text" | "call"; text: string }) => void;
  /** Per-attempt timeout, ms. */
  timeoutMs?: number;
  /**
   * The body already serialized, exactly `JSON.stringify(body)` (the assembler's text): sent as
   * it is, so the client does not serialize the whole body a second time. The SDK still reads
   * `body` for what it needs (stream, model).
   */
  text?: string;
}

const NO_KEY = "no-key";

/** What one call counts: the attempts its client made and the last body sent. */
interface CallState {
  attempts: number;
  sent: string | null;
}

/** Where a call's counters ride to the shared client's fetch: a key of the request's fetchOptions, which the SDKs pass on to `fetch`. */
const CALL_STATE = Symbol("klbr.route-call");

/**
 * The fetch every cached client uses: it counts the attempts of the call whose state rides in
 * `init` and keeps the exact body sent, then fetches without that key.
 */
const countingFetch = (async (url: string | URL | Request, init?: RequestInit & { [CALL_STATE]?: CallState }) => {
  const state = init?.[CALL_STATE];
  // The SDKs copy a request's fetchOptions into every attempt's init; a client that stopped doing so would lose the counts.
  if (!state) throw new DriverError("DRIVER_ROUTE_FAILED", "the route client called fetch without the call's state (an SDK change?)");
  const { [CALL_STATE]: _state, ...rest } = init;
  state.attempts += 1;
  if (typeof rest.body === "string") state.sent = rest.body;
  return fetch(url, rest);
}) as typeof fetch;

/**
 * One client per route, key and client settings, made once: constructing an SDK client (dozens of
 * resource objects, environment reads) costs more than the rest of a step's host work. The
 * clients read their environment (OPENAI_ORG_ID and the like) when made, as a fresh client did at
 * the first call. Bounded: the oldest is dropped past MAX_CLIENTS.
 */
const clients = new Map<string, OpenAI | Anthropic>();
const MAX_CLIENTS = 32;

function clientFor(route: Route, options: RouteCallOptions): OpenAI | Anthropic {
  const maxRetries = options.maxRetries ?? 2;
  // Stryker disable next-line EqualityOperator: negating the test negates the flag, which still tells the two client kinds apart
  const id = JSON.stringify([route.api === "anthropic", route.base_url, options.key, maxRetries, options.timeoutMs ?? null]);
  let client = clients.get(id);
  if (client) return client;
  const common = {
    apiKey: options.key ?? NO_KEY,
    baseURL: route.base_url,
    maxRetries,
    fetch: countingFetch,
    // Both SDKs read an undefined timeout as their default (10 minutes).
    timeout: options.timeoutMs,
  };
  client = route.api === "anthropic" ? new Anthropic(common) : new OpenAI(common);
  if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
  clients.set(id, client);
  return client;
}

/**
 * Send one request over the route's maintained client (openai for chat/responses, the Anthropic
 * SDK for anthropic), streaming, with the clients' own retry and backoff. A counting fetch sees
 * every attempt, so the retries are counted and the bytes sent are known exactly.
 */
export async function callRoute(route: Route, body: RequestBody, options: RouteCallOptions): Promise<RouteCallResult> {
  const state: CallState = { attempts: 0, sent: null };
  const request: CallRequest = {
    signal: options.signal,
    fetchOptions: { [CALL_STATE]: state } as RequestInit,
    // A string body with a content type is what both SDKs pass through verbatim (their raw-body path).
    ...(options.text !== undefined ? { body: options.text, headers: { "content-type": "application/json" } } : {}),
  };
  const retries = () => Math.max(0, state.attempts - 1);
  try {
    const client = clientFor(route, options);
    const { reply, usage, model } =
      route.api === "anthropic"
        ? await streamAnthropic(client as Anthropic, body, request, options)
        : route.api === "responses"
          ? await streamResponses(client as OpenAI, body, request, options)
          : await streamChat(client as OpenAI, body, request, options);
    return { reply, usage, model, retries: retries(), sent: state.sent };
  } catch (error) {
    if (isDriverError(error)) throw new DriverError(error.code, error.message, { retries: retries(), cause: error });
    const e = error as Error & { status?: number };
    const status = typeof e.status === "number" ? e.status : null;
    const what = status !== null ? `HTTP ${status}` : e.name;
    // A reply that does not parse surfaces from the SDKs as a SyntaxError: that is the route's fault, not the network's.
    const code = error instanceof SyntaxError ? "DRIVER_MALFORMED_REPLY" : "DRIVER_ROUTE_FAILED";
    throw new DriverError(code, `route ${JSON.stringify(route.name)} failed after ${retries()} retries: ${what}: ${e.message}`, { status, retries: retries(), cause: error });
  }
}

/** A call's own request options: its abort signal, and its counters for the shared client's fetch. */
type CallRequest = { signal: AbortSignal | undefined; fetchOptions: RequestInit; body?: string; headers?: Record<string, string> };

function finishUsage(reader: ReturnType<typeof createUsageStreamReader>): UsageRecord | null {
  const record = reader.finish();
  return record.raw.length === 0 ? null : record;
}

/** A model name as a reply names it: a non-empty string, else nothing. */
function modelName(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function malformed(route: string, why: string): DriverError {
  return new DriverError("DRIVER_MALFORMED_REPLY", `the ${route} stream ${why}`);
}

/**
 * The name so far after a name delta. The OpenAI wire sends a call's name once, but servers that
 * repeat the whole name in every delta are common (llama.cpp's among them): a delta that repeats
 * (or extends) the name accumulated so far is that name, not a suffix to append.
 */
export function accumulateName(sofar: string, delta: string): string {
  // Every text starts with "": the first delta is the name, and an empty one adds nothing.
  return delta.startsWith(sofar) ? delta : sofar + delta;
}

async function streamChat(client: OpenAI, body: RequestBody, request: CallRequest, options: RouteCallOptions) {
  const stream = await client.chat.completions.create(body as never, request as never);
  const usage = createUsageStreamReader();
  let text = "";
  let stop: string | null = null;
  let sawChoice = false;
  let model: string | null = null;
  // By index, in a Map: an index is any safe integer, and an array indexed by one past 2^32 - 2 would
  // drop the call (not an array index) or make the read walk billions of holes.
  const calls = new Map<number, ToolCall>();
  for await (const chunk of stream as unknown as AsyncIterable<Record<string, unknown>>) {
    if (typeof chunk !== "object" || chunk === null) throw malformed("chat", `sent a chunk that is not an object: ${JSON.stringify(chunk)}`);
    usage.push(chunk);
    // Every chunk names the model; the first that does is kept.
    model ??= modelName(chunk.model);
    const choices = chunk.choices;
    if (choices !== undefined && !Array.isArray(choices)) throw malformed("chat", "sent choices that are not an array");
    for (const choice of (choices ?? []) as Array<Record<string, unknown>>) {
      sawChoice = true;
      const delta = (choice.delta ?? {}) as { content?: unknown; tool_calls?: unknown };
      if (typeof delta.content === "string" && delta.content !== "") {
        text += delta.content;
        options.onDelta?.({ kind: "text", text: delta.content });
      }
      // Tool calls stream by index: the id and name arrive in the first piece, arguments in pieces.
      for (const piece of (Array.isArray(delta.tool_calls) ? delta.tool_calls : []) as Array<Record<string, unknown>>) {
        const index = piece.index;
        if (!Number.isSafeInteger(index) || (index as number) < 0) throw malformed("chat", `sent a tool call delta without an index: ${JSON.stringify(piece)}`);
        const fn = (piece.function ?? {}) as { name?: unknown; arguments?: unknown };
        let call = calls.get(index as number);
        if (call === undefined) calls.set(index as number, (call = { id: "", name: "", arguments: "" }));
        if (typeof piece.id === "string") call.id = piece.id;
        if (typeof fn.name === "string") call.name = accumulateName(call.name, fn.name);
        if (typeof fn.arguments === "string") {
          call.arguments += fn.arguments;
          options.onDelta?.({ kind: "call", text: fn.arguments });
        }
      }
      if (typeof choice.finish_reason === "string") stop = choice.finish_reason;
    }
  }
  if (!sawChoice) throw malformed("chat", "ended without a single choice");
  const list = [...calls].sort(([a], [b]) => a - b).map(([, call]) => call);
  for (const call of list) if (call.id === "" || call.name === "") throw malformed("chat", `sent a tool call without an id or a name: ${JSON.stringify(call)}`);
  return { reply: { text, calls: list, stop }, usage: finishUsage(usage), model };
}

async function streamResponses(client: OpenAI, body: RequestBody, request: CallRequest, options: RouteCallOptions) {
  const stream = await client.responses.create(body as never, request as never);
  // Stryker disable next-line ObjectLiteral: only response.* events reach the reader, which reads them as Responses by their type; a stream without usage gives null
  const usage = createUsageStreamReader({ provider: "openai_responses" });
  let text = "";
  let stop: string | null = null;
  let completed = false;
  let model: string | null = null;
  const calls: ToolCall[] = [];
  for await (const event of stream as unknown as AsyncIterable<Record<string, unknown>>) {
    // A primitive or null has no type either.
    if (typeof event?.type !== "string") throw malformed("responses", `sent an event without a type: ${JSON.stringify(event)}`);
    // response.created, .in_progress and .completed carry the response; the last that names a model wins.
    const named = modelName((event.response as { model?: unknown } | undefined)?.model);
    if (named !== null) model = named;
    if (event.type === "response.output_text.delta" && typeof event.delta === "string") {
      text += event.delta;
      options.onDelta?.({ kind: "text", text: event.delta });
    } else if (event.type === "response.function_call_arguments.delta" && typeof event.delta === "string") {
      options.onDelta?.({ kind: "call", text: event.delta });
    } else if (event.type === "response.output_item.done") {
      const item = (event.item ?? {}) as Record<string, unknown>;
      if (item.type === "function_call") {
        if (typeof item.call_id !== "string" || typeof item.name !== "string" || typeof item.arguments !== "string") {
          throw malformed("responses", `sent a function_call item without call_id, name or arguments: ${JSON.stringify(item)}`);
        }
        calls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
      }
    } else if (event.type === "response.completed" || event.type === "response.incomplete") {
      completed = true;
      usage.push(event);
      const response = (event.response ?? {}) as { status?: unknown };
      stop = typeof response.status === "string" ? response.status : event.type;
    } else if (event.type === "response.failed" || event.type === "error") {
      throw new DriverError("DRIVER_ROUTE_FAILED", `the route reported ${event.type}: ${JSON.stringify(event).slice(0, 500)}`);
    }
  }
  if (!completed) throw malformed("responses", "ended without response.completed");
  return { reply: { text, calls, stop }, usage: finishUsage(usage), model };
}

async function streamAnthropic(client: Anthropic, body: RequestBody, request: CallRequest, options: RouteCallOptions) {
  const stream = await client.messages.create(body as never, request as never);
  const usage = createUsageStreamReader({ provider: "anthropic" });
  let text = "";
  let stop: string | null = null;
  let stopped = false;
  let model: string | null = null;
  const blocks: Array<{ type: string; id?: string; name?: string; json: string } | undefined> = [];
  for await (const event of stream as unknown as AsyncIterable<Record<string, unknown>>) {
    // A primitive or null has no type either.
    if (typeof event?.type !== "string") throw malformed("anthropic", `sent an event without a type: ${JSON.stringify(event)}`);
    usage.push(event);
    const index = event.index as number;
    if (event.type === "message_start") {
      model = modelName((event.message as { model?: unknown } | undefined)?.model);
    } else if (event.type === "content_block_start") {
      const block = (event.content_block ?? {}) as Record<string, unknown>;
      blocks[index] = { type: String(block.type), id: block.id as string, name: block.name as string, json: "" };
      if (block.type === "text" && typeof block.text === "string") text += block.text;
    } else if (event.type === "content_block_delta") {
      const delta = (event.delta ?? {}) as Record<string, unknown>;
      if (delta.type === "text_delta" && typeof delta.text === "string") {
        text += delta.text;
        options.onDelta?.({ kind: "text", text: delta.text });
      } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
        const block = blocks[index];
        if (!block) throw malformed("anthropic", `sent a delta for block ${index} that never started`);
        block.json += delta.partial_json;
        options.onDelta?.({ kind: "call", text: delta.partial_json });
      }
    } else if (event.type === "message_delta") {
      const delta = (event.delta ?? {}) as { stop_reason?: unknown };
      if (typeof delta.stop_reason === "string") stop = delta.stop_reason;
    } else if (event.type === "message_stop") {
      stopped = true;
    } else if (event.type === "error") {
      throw new DriverError("DRIVER_ROUTE_FAILED", `the route reported an error event: ${JSON.stringify(event).slice(0, 500)}`);
    }
  }
  if (!stopped) throw malformed("anthropic", "ended without message_stop");
  const calls: ToolCall[] = [];
  for (const block of blocks) {
    if (block?.type !== "tool_use") continue;
    if (typeof block.id !== "string" || typeof block.name !== "string") throw malformed("anthropic", "sent a tool_use block without an id or a name");
    calls.push({ id: block.id, name: block.name, arguments: block.json === "" ? "{}" : block.json });
  }
  return { reply: { text, calls, stop }, usage: finishUsage(usage), model };
}
