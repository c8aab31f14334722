import { readCount, type JsonObject } from "../count.js";
import type { UsageCounts } from "../record.js";
import { put, type Extracted } from "./extracted.js";

/** Usage keys of the Anthropic Messages API (counts and the known non-count keys). */
export const ANTHROPIC_KEYS = [
  "input_tokens",
  "output_tokens",
  "cache_read_input_tokens",
  "cache_creation_input_tokens",
  "cache_creation",
  "server_tool_use",
  "service_tier",
] as const;

/**
 * Reads an Anthropic `usage` object. Its `input_tokens` excludes cache reads and writes, so it is
 * the uncached count, and `prompt_tokens` stays absent: Anthropic sends no whole-prompt number,
 * and input + cache_read + cache_creation would be our sum, not the route's.
 */
export function readAnthropicUsage(usage: JsonObject, path: string): Extracted {
  const counts: UsageCounts = {};
  put(counts, "uncached_prompt_tokens", readCount(usage, "input_tokens", path));
  put(counts, "cached_prompt_tokens", readCount(usage, "cache_read_input_tokens", path));
  put(counts, "cache_write_tokens", readCount(usage, "cache_creation_input_tokens", path));
  put(counts, "completion_tokens", readCount(usage, "output_tokens", path));
  return { counts, flags: [] };
}
