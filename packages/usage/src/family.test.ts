import { describe, expect, it } from "vitest";
import { thrownCode } from "../test/vectors.js";
import { checkProvider } from "./family.js";
import { readUsage } from "./read.js";

/** The shape readUsage detects for a bare `usage` object (no envelope to go by). */
const shapeOf = (usage: Record<string, unknown>, extra: Record<string, unknown> = {}) => readUsage({ ...extra, usage }).shape;

describe("shape detection from the usage keys alone", () => {
  it("any one DeepSeek hit/miss key marks DeepSeek", () => {
    expect(shapeOf({ prompt_cache_hit_tokens: 1 })).toBe("deepseek");
    expect(shapeOf({ prompt_cache_miss_tokens: 1 })).toBe("deepseek");
  });

  it("any one chat-completions key marks OpenAI chat", () => {
    expect(shapeOf({ prompt_tokens: 1 })).toBe("openai_chat");
    expect(shapeOf({ completion_tokens: 1 })).toBe("openai_chat");
    expect(shapeOf({ prompt_tokens_details: { cached_tokens: 0 } })).toBe("openai_chat");
  });

  it("any one OpenRouter accounting key, or a provider string beside the usage, marks OpenRouter", () => {
    expect(shapeOf({ prompt_tokens: 1, cost: 0.5 })).toBe("openrouter");
    expect(shapeOf({ prompt_tokens: 1, is_byok: false })).toBe("openrouter");
    expect(shapeOf({ prompt_tokens: 1, cost_details: {} })).toBe("openrouter");
    expect(shapeOf({ prompt_tokens: 1 }, { provider: "OpenAI" })).toBe("openrouter");
    expect(shapeOf({ prompt_tokens: 1 }, { provider: 7 })).toBe("openai_chat");
  });

  it("any one Anthropic cache key marks Anthropic", () => {
    expect(shapeOf({ input_tokens: 1, cache_read_input_tokens: 0 })).toBe("anthropic");
    expect(shapeOf({ input_tokens: 1, cache_creation_input_tokens: 0 })).toBe("anthropic");
    expect(shapeOf({ input_tokens: 1, cache_creation: {} })).toBe("anthropic");
  });

  it("any one Responses-only key marks OpenAI Responses", () => {
    expect(shapeOf({ input_tokens: 1, input_tokens_details: {} })).toBe("openai_responses");
    expect(shapeOf({ input_tokens: 1, output_tokens_details: {} })).toBe("openai_responses");
    expect(shapeOf({ input_tokens: 1, total_tokens: 1 })).toBe("openai_responses");
  });

  it("input/output counts alone do not tell Anthropic from Responses", () => {
    expect(thrownCode(() => shapeOf({ input_tokens: 1, output_tokens: 2 }))).toBe("USAGE_UNKNOWN_SHAPE");
  });

  it("Gemini's usageMetadata wins over a usage object beside it", () => {
    const record = readUsage({ usageMetadata: { promptTokenCount: 4 }, usage: { prompt_tokens: 9 } });
    expect(record).toMatchObject({ shape: "gemini", prompt_tokens: 4 });
  });
});

describe("shape detection from the envelope", () => {
  it("any chat.completion object type, chunk included, marks OpenAI chat; a provider string marks OpenRouter", () => {
    expect(readUsage({ object: "chat.completion", usage: {} }).shape).toBe("openai_chat");
    expect(readUsage({ object: "chat.completion.chunk", usage: {} }).shape).toBe("openai_chat");
    expect(readUsage({ object: "chat.completion", provider: "Groq", usage: {} }).shape).toBe("openrouter");
  });

  it("another object type says nothing", () => {
    expect(thrownCode(() => readUsage({ object: "embedding.list", usage: {} }))).toBe("USAGE_UNKNOWN_SHAPE");
  });

  it("a usageMetadata that is not an object still marks Gemini, and is refused", () => {
    expect(() => readUsage({ usageMetadata: 5 })).toThrow("usageMetadata must be an object, got 5");
  });

  it("a candidates list alone marks Gemini, with no counts", () => {
    expect(readUsage({ candidates: [] })).toStrictEqual({ shape: "gemini", raw: [], flags: [] });
  });
});

describe("declared providers", () => {
  it("checkProvider passes undefined and every shape, and names the choices when refusing", () => {
    expect(checkProvider(undefined)).toBeUndefined();
    expect(checkProvider("openrouter")).toBe("openrouter");
    expect(() => checkProvider("claude")).toThrow(
      'provider must be one of openai_chat, openai_responses, deepseek, openrouter, anthropic, gemini, got "claude"',
    );
    expect(thrownCode(() => checkProvider(5))).toBe("USAGE_UNKNOWN_PROVIDER");
  });

  it("a usage object with one known key among unknown ones is read, not refused", () => {
    const record = readUsage({ usage: { prompt_tokens: 3, vendor_extra: 1 } }, { provider: "openai_chat" });
    expect(record).toMatchObject({ shape: "openai_chat", prompt_tokens: 3 });
  });

  it("a usage object with none of the declared family's keys is refused, naming the keys expected and found", () => {
    expect(() => readUsage({ usage: { tokens: 3 } }, { provider: "anthropic" })).toThrow(
      "usage has none of the anthropic usage keys (input_tokens, output_tokens, cache_read_input_tokens, " +
        'cache_creation_input_tokens, cache_creation, server_tool_use, service_tier); its keys are ["tokens"]',
    );
  });

  it("a usage value that is not an object is refused with its path", () => {
    expect(() => readUsage({ usage: 5 })).toThrow("usage must be an object, got 5");
    expect(() => readUsage({ usageMetadata: [1] }, { provider: "gemini" })).toThrow("usageMetadata must be an object, got [1]");
  });
});
