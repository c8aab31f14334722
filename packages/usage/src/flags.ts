import type { Family } from "./family.js";
import { USAGE_FLAGS, type UsageCounts, type UsageFlag } from "./record.js";

/**
 * The inconsistencies between reported counts. Only counts the route sent are compared; nothing
 * is corrected. Where a family's counts nest differently the rule says so.
 */
export function consistencyFlags(counts: UsageCounts, family: Family): UsageFlag[] {
  const flags: UsageFlag[] = [];
  const { prompt_tokens: prompt, completion_tokens: completion, cached_prompt_tokens: cached } = counts;
  const { cache_write_tokens: write, uncached_prompt_tokens: uncached, reasoning_tokens: reasoning } = counts;
  const total = counts.total_tokens;
  if (prompt !== undefined) {
    if (cached !== undefined && cached > prompt) flags.push("cached_exceeds_prompt");
    if (write !== undefined && write > prompt) flags.push("cache_write_exceeds_prompt");
    if (cached !== undefined && write !== undefined && cached + write > prompt) flags.push("cached_plus_write_exceeds_prompt");
    if (uncached !== undefined && uncached > prompt) flags.push("uncached_exceeds_prompt");
    // uncached is the part billed at the plain input rate: not read from, not written to cache.
    if (uncached !== undefined && cached !== undefined && uncached + cached + (write ?? 0) !== prompt) {
      flags.push("uncached_plus_cached_mismatch");
    }
  }
  // OpenAI-style completion counts include reasoning; Gemini's candidates count does not.
  const reasoningInside = family === "chat" || family === "responses";
  if (reasoningInside && reasoning !== undefined && completion !== undefined && reasoning > completion) {
    flags.push("reasoning_exceeds_completion");
  }
  if (total !== undefined && prompt !== undefined) {
    if (reasoningInside && completion !== undefined && total !== prompt + completion) flags.push("total_mismatch");
    // Gemini's total also counts tool-use prompt tokens, so only a shortfall is inconsistent.
    if (family === "gemini" && total < prompt + (completion ?? 0) + (reasoning ?? 0)) flags.push("total_mismatch");
  }
  return flags;
}

/** Deduplicates flags and puts them in USAGE_FLAGS order, so records compare stably. */
export function orderFlags(flags: Iterable<UsageFlag>): UsageFlag[] {
  const seen = new Set(flags);
  return USAGE_FLAGS.filter((flag) => seen.has(flag));
}
