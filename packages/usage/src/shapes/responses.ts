import { readCount, readDetails, type JsonObject } from "../count.js";
import type { UsageCounts } from "../record.js";
import { put, type Extracted } from "./extracted.js";

/** Top-level usage keys of the OpenAI Responses API. */
export const RESPONSES_KEYS = [
  "input_tokens",
  "output_tokens",
  "total_tokens",
  "input_tokens_details",
  "output_tokens_details",
] as const;

/** Reads an OpenAI Responses `usage` object (`input_tokens`, `input_tokens_details`, ...). */
export function readResponsesUsage(usage: JsonObject, path: string): Extracted {
  const counts: UsageCounts = {};
  put(counts, "prompt_tokens", readCount(usage, "input_tokens", path));
  put(counts, "completion_tokens", readCount(usage, "output_tokens", path));
  put(counts, "total_tokens", readCount(usage, "total_tokens", path));
  const inputPath = `${path}.input_tokens_details`;
  const input = readDetails(usage, "input_tokens_details", path);
  put(counts, "cached_prompt_tokens", input && readCount(input, "cached_tokens", inputPath));
  put(counts, "cache_write_tokens", input && readCount(input, "cache_write_tokens", inputPath));
  const output = readDetails(usage, "output_tokens_details", path);
  put(counts, "reasoning_tokens", output && readCount(output, "reasoning_tokens", `${path}.output_tokens_details`));
  return { counts, flags: [] };
}
