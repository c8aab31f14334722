import { describe, expect, it } from "vitest";
import { readAnthropicUsage } from "./anthropic.js";
import { readChatUsage } from "./chat.js";
import { readGeminiUsage } from "./gemini.js";
import { readResponsesUsage } from "./responses.js";

describe("the shape readers", () => {
  it("read each family's counts and raise no flags of their own for consistent usage", () => {
    expect(readAnthropicUsage({ input_tokens: 3, output_tokens: 4 }, "usage")).toStrictEqual({
      counts: { uncached_prompt_tokens: 3, completion_tokens: 4 },
      flags: [],
    });
    expect(readChatUsage({ prompt_tokens: 3, completion_tokens: 4 }, "usage")).toStrictEqual({
      counts: { prompt_tokens: 3, completion_tokens: 4 },
      flags: [],
    });
    expect(readGeminiUsage({ promptTokenCount: 3, thoughtsTokenCount: 2 }, "usageMetadata")).toStrictEqual({
      counts: { prompt_tokens: 3, reasoning_tokens: 2 },
      flags: [],
    });
    expect(readResponsesUsage({ input_tokens: 3, output_tokens_details: { reasoning_tokens: 1 } }, "usage")).toStrictEqual({
      counts: { prompt_tokens: 3, reasoning_tokens: 1 },
      flags: [],
    });
  });

  it("name the full path of a bad count inside a details object", () => {
    expect(() => readChatUsage({ completion_tokens_details: { reasoning_tokens: -1 } }, "usage")).toThrow(
      "usage.completion_tokens_details.reasoning_tokens must be a non-negative integer, got -1",
    );
    expect(() => readResponsesUsage({ input_tokens_details: { cached_tokens: 1.5 } }, "usage")).toThrow(
      "usage.input_tokens_details.cached_tokens must be a non-negative integer, got 1.5",
    );
    expect(() => readResponsesUsage({ output_tokens_details: { reasoning_tokens: "2" } }, "usage")).toThrow(
      'usage.output_tokens_details.reasoning_tokens must be a non-negative integer, got "2"',
    );
  });
});
