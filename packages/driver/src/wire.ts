import type Anthropic from "@anthropic-ai/sdk";
import { stripCacheOptions } from "@klbr/usage";
import type OpenAI from "openai";
import type { ImagePart, Message } from "./messages.js";
import type { Route } from "./routes.js";

/** How messages are written: whether their images go too (C20: only for a route declared `"images": true`). */
export interface WireOptions {
  images?: boolean;
}

/** An image as a data URL: what chat's image_url and Responses' input_image carry. */
function dataUrl(image: ImagePart): string {
  return `data:${image.mime};base64,${image.base64}`;
}

/** The images a message sends, given the route: none unless it takes images. */
function imagesOf(m: Message, opts: WireOptions): ImagePart[] {
  return opts.images === true && (m.role === "tool" || m.role === "user") ? (m.images ?? []) : [];
}

/** A chat image part (the SDK's type): a data URL. */
function chatImage(image: ImagePart): OpenAI.Chat.Completions.ChatCompletionContentPartImage {
  return { type: "image_url", image_url: { url: dataUrl(image) } };
}

/**
 * Chat's tool messages carry text only (the SDK's ChatCompletionToolMessageParam), so the images
 * of the tool results of one reply follow them as one user message of image parts, before the next
 * message that is not a tool result (or at the end).
 */
export function chatImageMessage(images: ImagePart[]): OpenAI.Chat.Completions.ChatCompletionUserMessageParam {
  return { role: "user", content: images.map(chatImage) };
}

/** A Responses image part (the SDK's type): a data URL. */
function responsesImage(image: ImagePart): OpenAI.Responses.ResponseInputImageContent & OpenAI.Responses.ResponseInputImage {
  return { type: "input_image", detail: "auto", image_url: dataUrl(image) };
}

/** An Anthropic image block (the SDK's type): base64 bytes. */
function anthropicImage(image: ImagePart): Anthropic.Messages.ImageBlockParam {
  return { type: "image", source: { type: "base64", media_type: image.mime, data: image.base64 } };
}

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
  const wire: WireOptions = { images: route.images === true };
  switch (route.api) {
    case "chat":
      return {
        model: route.model,
        ...options,
        ...(tool ? { tools: [{ type: "function", function: PYTHON_TOOL }] } : {}),
        stream: true,
        stream_options: { include_usage: true },
        messages: chatMessages(messages, wire),
      };
    case "responses":
      return {
        model: route.model,
        ...options,
        ...(tool ? { tools: [{ type: "function", ...PYTHON_TOOL, strict: false }] } : {}),
        stream: true,
        input: responsesInput(messages, wire),
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
        messages: markLast(anthropicMessages(others, wire)),
      };
    }
  }
}

/** The wire messages of a body, whichever key the route's API puts them under. */
export function bodyMessages(body: RequestBody): unknown[] {
  return (body.messages ?? body.input ?? []) as unknown[];
}

/**
 * OpenAI chat completions messages; with `images`, each tool result's images in a user message
 * after the results of its reply (chatImageMessage), a user result's as parts of its own content.
 */
export function chatMessages(messages: Message[], opts: WireOptions = {}): unknown[] {
  const out: unknown[] = [];
  let pending: ImagePart[] = [];
  for (const m of messages) {
    if (m.role !== "tool" && pending.length > 0) out.push(chatImageMessage(pending.splice(0)));
    out.push(chatMessage(m, opts));
    if (m.role === "tool") pending.push(...imagesOf(m, opts));
  }
  if (pending.length > 0) out.push(chatImageMessage(pending));
  return out;
}

/** One neutral message as one chat message (a tool result's images are the caller's, see chatMessages). */
export function chatMessage(m: Message, opts: WireOptions = {}): unknown {
  switch (m.role) {
    case "system":
      return { role: m.role, content: m.text };
    case "user": {
      const images = imagesOf(m, opts);
      if (images.length === 0) return { role: m.role, content: m.text };
      const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [{ type: "text", text: m.text }, ...images.map(chatImage)];
      return { role: m.role, content };
    }
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
}

/**
 * OpenAI Responses input items: calls and their outputs are items of their own; with `images`, a
 * result's images are input_image parts of its output (or of its user message's content).
 */
export function responsesInput(messages: Message[], opts: WireOptions = {}): unknown[] {
  const items: unknown[] = [];
  for (const m of messages) {
    const images = imagesOf(m, opts);
    if (m.role === "system" || (m.role === "user" && images.length === 0)) items.push({ role: m.role, content: m.text });
    else if (m.role === "user") {
      const content: OpenAI.Responses.ResponseInputMessageContentList = [{ type: "input_text", text: m.text }, ...images.map(responsesImage)];
      items.push({ role: "user", content });
    } else if (m.role === "tool" && images.length === 0) items.push({ type: "function_call_output", call_id: m.call_id, output: m.text });
    else if (m.role === "tool") {
      const output: OpenAI.Responses.ResponseFunctionCallOutputItemList = [{ type: "input_text", text: m.text }, ...images.map(responsesImage)];
      items.push({ type: "function_call_output", call_id: m.call_id, output });
    } else {
      if (m.text !== "") items.push({ role: "assistant", content: m.text });
      for (const c of m.calls) items.push({ type: "function_call", call_id: c.id, name: c.name, arguments: c.arguments });
    }
  }
  return items;
}

/**
 * Anthropic messages: tool calls are tool_use blocks, results tool_result blocks in a user turn;
 * with `images`, a result's images are image blocks in its tool_result's content (or its message's).
 */
export function anthropicMessages(messages: Message[], opts: WireOptions = {}): Array<{ role: string; content: Array<Record<string, unknown>> }> {
  return messages.map((m) => {
    const images = imagesOf(m, opts);
    switch (m.role) {
      case "system":
      case "user":
        return { role: "user", content: [{ type: "text", text: m.text }, ...images.map(anthropicImage)] as Array<Record<string, unknown>> };
      case "tool": {
        if (images.length === 0) return { role: "user", content: [{ type: "tool_result", tool_use_id: m.call_id, content: m.text }] };
        const result: Anthropic.Messages.ToolResultBlockParam = { type: "tool_result", tool_use_id: m.call_id, content: [{ type: "text", text: m.text }, ...images.map(anthropicImage)] };
        return { role: "user", content: [result as unknown as Record<string, unknown>] };
      }
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
