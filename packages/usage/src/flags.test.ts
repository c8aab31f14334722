import { describe, expect, it } from "vitest";
import { buildRecord } from "./build.js";
import { consistencyFlags } from "./flags.js";

describe("consistencyFlags: each rule at its edge", () => {
  it("consistent counts give no flags", () => {
    expect(consistencyFlags({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, "chat")).toEqual([]);
    expect(consistencyFlags({}, "gemini")).toEqual([]);
  });

  it("cached equal to the prompt is fine, one more is flagged", () => {
    expect(consistencyFlags({ prompt_tokens: 10, cached_prompt_tokens: 10 }, "chat")).toEqual([]);
    expect(consistencyFlags({ prompt_tokens: 10, cached_prompt_tokens: 11 }, "chat")).toEqual(["cached_exceeds_prompt"]);
  });

  it("a cache write equal to the prompt is fine, one more is flagged", () => {
    expect(consistencyFlags({ prompt_tokens: 10, cache_write_tokens: 10 }, "chat")).toEqual([]);
    expect(consistencyFlags({ prompt_tokens: 10, cache_write_tokens: 11 }, "chat")).toEqual(["cache_write_exceeds_prompt"]);
  });

  it("cached plus written equal to the prompt is fine, one more is flagged", () => {
    expect(consistencyFlags({ prompt_tokens: 10, cached_prompt_tokens: 4, cache_write_tokens: 6 }, "chat")).toEqual([]);
    expect(consistencyFlags({ prompt_tokens: 10, cached_prompt_tokens: 4, cache_write_tokens: 7 }, "chat")).toEqual([
      "cached_plus_write_exceeds_prompt",
    ]);
  });

  it("uncached above the prompt is flagged; uncached + cached + written must equal the prompt", () => {
    expect(consistencyFlags({ prompt_tokens: 10, uncached_prompt_tokens: 11 }, "chat")).toEqual(["uncached_exceeds_prompt"]);
    expect(consistencyFlags({ prompt_tokens: 10, uncached_prompt_tokens: 10 }, "chat")).toEqual([]);
    const counts = { prompt_tokens: 10, uncached_prompt_tokens: 5, cached_prompt_tokens: 3, cache_write_tokens: 2 };
    expect(consistencyFlags(counts, "chat")).toEqual([]);
    expect(consistencyFlags({ ...counts, cache_write_tokens: 1 }, "chat")).toEqual(["uncached_plus_cached_mismatch"]);
  });

  it("reasoning equal to completion is fine, one more is flagged, in the chat and Responses families", () => {
    for (const family of ["chat", "responses"] as const) {
      expect(consistencyFlags({ completion_tokens: 5, reasoning_tokens: 5 }, family)).toEqual([]);
      expect(consistencyFlags({ completion_tokens: 5, reasoning_tokens: 6 }, family)).toEqual(["reasoning_exceeds_completion"]);
    }
    // Gemini's candidates count excludes thoughts, so more thoughts than candidates is normal.
    expect(consistencyFlags({ completion_tokens: 5, reasoning_tokens: 6 }, "gemini")).toEqual([]);
  });

  it("a chat or Responses total must be prompt + completion, compared only when all three were sent", () => {
    expect(consistencyFlags({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 6 }, "responses")).toEqual(["total_mismatch"]);
    expect(consistencyFlags({ prompt_tokens: 2, completion_tokens: 3 }, "chat")).toEqual([]);
    expect(consistencyFlags({ completion_tokens: 3, total_tokens: 9 }, "chat")).toEqual([]);
    expect(consistencyFlags({ prompt_tokens: 2, total_tokens: 9 }, "chat")).toEqual([]);
  });

  it("a Gemini total is flagged only below prompt + candidates + thoughts", () => {
    const parts = { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 3 };
    expect(consistencyFlags({ ...parts, total_tokens: 18 }, "gemini")).toEqual([]);
    expect(consistencyFlags({ ...parts, total_tokens: 17 }, "gemini")).toEqual(["total_mismatch"]);
    expect(consistencyFlags({ ...parts, total_tokens: 15 }, "gemini")).toEqual(["total_mismatch"]);
  });
});

describe("buildRecord", () => {
  it("checks consistency only for a known family", () => {
    const counts = { prompt_tokens: 1, cached_prompt_tokens: 2 };
    expect(buildRecord("unknown", undefined, counts, []).flags).toEqual([]);
    expect(buildRecord("openai_chat", "chat", counts, []).flags).toEqual(["cached_exceeds_prompt"]);
  });
});
