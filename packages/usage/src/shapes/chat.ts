import { readCount, readDetails, type JsonObject } from "../count.js";
import type { UsageCounts, UsageFlag } from "../record.js";
import { put, type Extracted } from "./extracted.js";

/** Top-level usage keys of the chat-completions family (OpenAI, DeepSeek, OpenRouter cost keys). */
export const CHAT_KEYS = [
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "prompt_tokens_details",
  "completion_tokens_details",
  "prompt_cache_hit_tokens",
  "prompt_cache_miss_tokens",
  "cost",
  "is_byok",
  "cost_details",
] as const;

/**
 * Reads a chat-completions `usage` object. DeepSeek's `prompt_cache_hit_tokens` /
 * `prompt_cache_miss_tokens` are read wherever they appear: hit is the cached count (it pairs
 * with miss), and a disagreeing `prompt_tokens_details.cached_tokens` is flagged, not dropped
 * from `raw`.
 */
export function readChatUsage(usage: JsonObject, path: string): Extracted {
  const counts: UsageCounts = {};
  const flags: UsageFlag[] = [];
  put(counts, "prompt_tokens", readCount(usage, "prompt_tokens", path));
  put(counts, "completion_tokens", readCount(usage, "completion_tokens", path));
  put(counts, "total_tokens", readCount(usage, "total_tokens", path));

  const promptPath = `${path}.prompt_tokens_details`;
  const prompt = readDetails(usage, "prompt_tokens_details", path);
  const detailCached = prompt && readCount(prompt, "cached_tokens", promptPath);
  put(counts, "cache_write_tokens", prompt && readCount(prompt, "cache_write_tokens", promptPath));

  const hit = readCount(usage, "prompt_cache_hit_tokens", path);
  const miss = readCount(usage, "prompt_cache_miss_tokens", path);
  put(counts, "cached_prompt_tokens", hit ?? detailCached);
  put(counts, "uncached_prompt_tokens", miss);
  if (hit !== undefined && detailCached !== undefined && hit !== detailCached) flags.push("cached_sources_disagree");

  const completion = readDetails(usage, "completion_tokens_details", path);
  put(counts, "reasoning_tokens", completion && readCount(completion, "reasoning_tokens", `${path}.completion_tokens_details`));
  return { counts, flags };
}
