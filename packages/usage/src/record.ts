/** The usage shapes this package reads: which wire format a route speaks. */
export const USAGE_SHAPES = [
  "openai_chat",
  "openai_responses",
  "deepseek",
  "openrouter",
  "anthropic",
  "gemini",
] as const;

/** One of USAGE_SHAPES. */
export type UsageShape = (typeof USAGE_SHAPES)[number];

/** The token counts of a record, in a fixed order; each is present only when the route sent it. */
export const USAGE_COUNT_FIELDS = [
  "prompt_tokens",
  "completion_tokens",
  "cached_prompt_tokens",
  "cache_write_tokens",
  "uncached_prompt_tokens",
  "reasoning_tokens",
  "total_tokens",
] as const;

/** One of USAGE_COUNT_FIELDS. */
export type UsageCountField = (typeof USAGE_COUNT_FIELDS)[number];

/** The counts a route reported; a property is absent when the route did not send that number. */
export type UsageCounts = { [K in UsageCountField]?: number };

/** Inconsistencies between reported numbers, in the order they are listed on a record. */
export const USAGE_FLAGS = [
  "cached_exceeds_prompt",
  "cache_write_exceeds_prompt",
  "cached_plus_write_exceeds_prompt",
  "uncached_exceeds_prompt",
  "uncached_plus_cached_mismatch",
  "reasoning_exceeds_completion",
  "total_mismatch",
  "cached_sources_disagree",
  "stream_counts_decreased",
] as const;

/** One of USAGE_FLAGS. */
export type UsageFlag = (typeof USAGE_FLAGS)[number];

/**
 * What one request cost, exactly as the route reported it. Counts the route did not send are
 * absent properties (never 0, never derived); inconsistent numbers are kept and flagged.
 */
export interface UsageRecord extends UsageCounts {
  /** The shape the usage was read as; `unknown` when nothing identified one and no usage came. */
  shape: UsageShape | "unknown";
  /** Every raw usage object read, in arrival order (one for a response; none when none came). */
  raw: unknown[];
  /** Inconsistencies found in the reported numbers, in USAGE_FLAGS order; empty when none. */
  flags: UsageFlag[];
}
