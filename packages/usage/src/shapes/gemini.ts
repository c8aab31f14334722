import { readCount, type JsonObject } from "../count.js";
import type { UsageCounts } from "../record.js";
import { put, type Extracted } from "./extracted.js";

/** Count keys of Gemini's `usageMetadata`. */
export const GEMINI_KEYS = [
  "promptTokenCount",
  "candidatesTokenCount",
  "cachedContentTokenCount",
  "thoughtsTokenCount",
  "totalTokenCount",
  "toolUsePromptTokenCount",
  "promptTokensDetails",
  "candidatesTokensDetails",
  "cacheTokensDetails",
] as const;

/**
 * Reads Gemini's `usageMetadata`. Gemini omits zero counts (proto3 JSON), so an absent count there
 * usually means zero; it still stays absent here, because that zero is not what the route sent.
 * `candidatesTokenCount` excludes thoughts (unlike OpenAI's completion_tokens).
 */
export function readGeminiUsage(usage: JsonObject, path: string): Extracted {
  const counts: UsageCounts = {};
  put(counts, "prompt_tokens", readCount(usage, "promptTokenCount", path));
  put(counts, "completion_tokens", readCount(usage, "candidatesTokenCount", path));
  put(counts, "cached_prompt_tokens", readCount(usage, "cachedContentTokenCount", path));
  put(counts, "reasoning_tokens", readCount(usage, "thoughtsTokenCount", path));
  put(counts, "total_tokens", readCount(usage, "totalTokenCount", path));
  return { counts, flags: [] };
}
