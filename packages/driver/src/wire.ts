import { stripCacheOptions } from "@klbr/usage";
import type { Message } from "./messages.js";
import type { Route } from "./routes.js";

/** The one tool a `cells: "tool"` route is offered (C10). */
export const PYTHON_TOOL = {
  name: "python",
  description:
    "Run Python in this session's persistent workbench (top-level await allowed; `runtime` is the host API). The result is the cell's output, error and status.",
  parameters: {
    type: "object",
    properties: { code: { type: "string", description: "Python source of one cell" } },
    required: ["code"],
    additionalProperties: false,
  },
} as const;

/** Anthropic requires max_tokens; this is what a route that does not set it gets. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** A request body: the JSON object the route client sends, messages last so requests extend each other. */
export type RequestBody = Record<string, unknown>;

/**
 * The request body for a route: its model, its options after `stripCacheOptions` with the route's
 * `accepts`, the python tool when cells are tools, streaming on, then the messages in the route's
 * wire shape. Key order is fixed and the messages come last, so a request whose messages extend
 * the previous one's is a byte extension of it up to the closing brackets.
 */
export function buildRequestBody(route: Route, messages: Message[]): RequestBody {
  const options = stripCacheOptions(route.options, { accepts: route.accepts }) as Record<string, unknown>;
  const tool = route.cells === "tool";
  switch (route.api) {
    case "chat":
      return {
        model: route.model,
        ...options,
        ...(tool ? { tools: [{ type: "function", function: PYTHON_TOOL }] } : {}),
        stream: true,
        stream_options: { include_usage: true },
        messages: chatMessages(messages),
      };
    case "responses":
      return {
        model: route.model,
        ...options,
        ...(tool ? { tools: [{ type: "function", ...PYTHON_TOOL, strict: false }] } : {}),
        stream: true,
        input: responsesInput(messages),
      };
    case "anthropic": {
      const { max_tokens, ...rest } = options;
      const [system, ...others] = messages;
      return {
        model: route.model,
        max_tokens: max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
        ...rest,
        ...(tool ? { tools: [{ name: PYTHON_TOOL.name, description: PYTHON_TOOL.description, input_schema: PYTHON_TOOL.parameters }] } : {}),
        stream: true,
        system: [{ type: "text", text: system?.role === "system" ? system.text : "", cache_control: { type: "ephemeral" } }],
        messages: markLast(anthropicMessages(others)),
      };
    }
  }
}

/** The wire messages of a body, whichever key the route's API puts them under. */
export function bodyMessages(body: RequestBody): unknown[] {
  return (body.messages ?? body.input ?? []) as unknown[];
}

/** OpenAI chat completions messages. */
export function chatMessages(messages: Message[]): unknown[] {
  return messages.map((m) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.text };
      case "assistant":
        return m.calls.length === 0
          ? { role: "assistant", content: m.text }
          : {
              role: "assistant",
              // No text: `content` is the empty string, never `null` (llama.cpp's server refuses null)
              // nor left out (its chatml-function-calling template then fails on the missing key).
              content: m.text,
              tool_calls: m.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
            };
      case "tool":
        return { role: "tool", tool_call_id: m.call_id, content: m.text };
    }
  });
}

/** OpenAI Responses input items: calls and their outputs are items of their own. */
export function responsesInput(messages: Message[]): unknown[] {
  const items: unknown[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.role === "user") items.push({ role: m.role, content: m.text });
    else if (m.role === "tool") items.push({ type: "function_call_output", call_id: m.call_id, output: m.text });
    else {
      if (m.text !== "") items.push({ role: "assistant", content: m.text });
      for (const c of m.calls) items.push({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments });
    }
  }
  return items;
}

/** Anthropic messages: tool calls are tool_use blocks, results tool_result blocks in a user turn. */
export function anthropicMessages(messages: Message[]): Array<{ role: string; content: Array<Record<string, unknown>> }> {
  return messages.map((m) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: "user", content: [{ type: "text", text: m.text }] };
      case "tool":
        return { role: "user", content: [{ type: "tool_result", tool_use_id: m.call_id, content: m.text }] };
      case "assistant":
        return {
          role: "assistant",
          content: [
            ...(m.text !== "" || m.calls.length === 0 ? [{ type: "text", text: m.text }] : []),
            ...m.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: toolInput(c.arguments) })),
          ],
        };
    }
  });
}

/** Anthropic wants an object; arguments that do not parse to one are replayed as what they were. */
function toolInput(args: string): unknown {
  try {
    const value: unknown = JSON.parse(args === "" ? "{}" : args);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch {
    /* fall through */
  }
  return { unparsed_arguments: args };
}

/** A cache breakpoint on the last block of the last message (Anthropic caches at marked breakpoints only). */
function markLast<T extends { content: Array<Record<string, unknown>> }>(messages: T[]): T[] {
  const last = messages.at(-1);
  if (!last) return messages;
  const blocks = last.content.slice();
  const block = blocks.at(-1);
  if (block) blocks[blocks.length - 1] = { ...block, cache_control: { type: "ephemeral" } };
  return [...messages.slice(0, -1), { ...last, content: blocks }];
}
