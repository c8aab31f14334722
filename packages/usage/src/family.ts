import { has, isObject, type JsonObject } from "./count.js";
import { UsageError, describeValue } from "./errors.js";
import { USAGE_SHAPES, type UsageShape } from "./record.js";
import { ANTHROPIC_KEYS, readAnthropicUsage } from "./shapes/anthropic.js";
import { CHAT_KEYS, readChatUsage } from "./shapes/chat.js";
import type { Extracted } from "./shapes/extracted.js";
import { GEMINI_KEYS, readGeminiUsage } from "./shapes/gemini.js";
import { RESPONSES_KEYS, readResponsesUsage } from "./shapes/responses.js";

/** A wire family: shapes in one family share a reader and only differ in their label. */
export type Family = "chat" | "responses" | "anthropic" | "gemini";

const FAMILY: Record<UsageShape, Family> = {
  openai_chat: "chat",
  deepseek: "chat",
  openrouter: "chat",
  openai_responses: "responses",
  anthropic: "anthropic",
  gemini: "gemini",
};

const DEFAULT_SHAPE: Record<Family, UsageShape> = {
  chat: "openai_chat",
  responses: "openai_responses",
  anthropic: "anthropic",
  gemini: "gemini",
};

const KEYS: Record<Family, readonly string[]> = {
  chat: CHAT_KEYS,
  responses: RESPONSES_KEYS,
  anthropic: ANTHROPIC_KEYS,
  gemini: GEMINI_KEYS,
};

const READERS: Record<Family, (usage: JsonObject, path: string) => Extracted> = {
  chat: readChatUsage,
  responses: readResponsesUsage,
  anthropic: readAnthropicUsage,
  gemini: readGeminiUsage,
};

/** The family a shape belongs to. */
export function familyOf(shape: UsageShape): Family {
  return FAMILY[shape];
}

/** The shape a family is labelled with when nothing more specific is known. */
export function defaultShape(family: Family): UsageShape {
  return DEFAULT_SHAPE[family];
}

/** Reads one raw usage object with its family's reader. */
export function extract(family: Family, usage: JsonObject, path: string): Extracted {
  return READERS[family](usage, path);
}

/** Validates the `provider` option: undefined, or one of USAGE_SHAPES. */
export function checkProvider(provider: unknown): UsageShape | undefined {
  if (provider === undefined) return undefined;
  if (typeof provider === "string" && (USAGE_SHAPES as readonly string[]).includes(provider)) return provider as UsageShape;
  throw new UsageError(
    "USAGE_UNKNOWN_PROVIDER",
    `provider must be one of ${USAGE_SHAPES.join(", ")}, got ${describeValue(provider)}`,
  );
}

/**
 * The shape a chat/Responses/Anthropic `usage` object's own keys reveal, if any (Gemini's usage
 * lives under `usageMetadata`, which the callers recognise by its place). `container` is the object holding it, whose
 * `provider` string marks an OpenRouter response.
 */
export function shapeOfUsage(usage: JsonObject, container?: JsonObject): UsageShape | undefined {
  if (has(usage, "prompt_cache_hit_tokens") || has(usage, "prompt_cache_miss_tokens")) return "deepseek";
  if (has(usage, "prompt_tokens") || has(usage, "completion_tokens") || has(usage, "prompt_tokens_details")) {
    const openrouter =
      // Stryker disable next-line OptionalChaining: equivalent, both callers (read.ts, stream.ts) always pass the container
      has(usage, "cost") || has(usage, "is_byok") || has(usage, "cost_details") || typeof container?.provider === "string";
    return openrouter ? "openrouter" : "openai_chat";
  }
  if (has(usage, "cache_read_input_tokens") || has(usage, "cache_creation_input_tokens") || has(usage, "cache_creation")) {
    return "anthropic";
  }
  if (has(usage, "input_tokens_details") || has(usage, "output_tokens_details") || has(usage, "total_tokens")) {
    return "openai_responses";
  }
  return undefined;
}

/** The shape a whole (non-stream) response reveals by its envelope, if any. */
export function shapeOfResponse(response: JsonObject): UsageShape | undefined {
  if (response.type === "message") return "anthropic";
  if (response.object === "response") return "openai_responses";
  if (typeof response.object === "string" && response.object.startsWith("chat.completion")) {
    return typeof response.provider === "string" ? "openrouter" : "openai_chat";
  }
  if (has(response, "usageMetadata") || has(response, "candidates")) return "gemini";
  return undefined;
}

/**
 * Refuses a usage object, read as a declared shape, that carries keys but none its family knows:
 * reading it would silently give an empty record.
 */
export function checkUsageMatches(family: Family, usage: JsonObject, path: string): void {
  const keys = Object.keys(usage);
  if (keys.length === 0 || keys.some((key) => KEYS[family].includes(key))) return;
  throw new UsageError(
    "USAGE_SHAPE_MISMATCH",
    `${path} has none of the ${family} usage keys (${KEYS[family].join(", ")}); its keys are ${describeValue(keys)}`,
  );
}

/** Narrows an unknown usage value: null/undefined mean none, an object is read, anything else is refused. */
export function usageObject(value: unknown, path: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new UsageError("USAGE_INVALID_FIELD", `${path} must be an object, got ${describeValue(value)}`);
  return value;
}
