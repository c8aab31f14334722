import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { thrownCode } from "../test/vectors.js";
import { readUsage } from "./read.js";
import { USAGE_COUNT_FIELDS } from "./record.js";

const count = fc.nat({ max: 2_000_000 });

/** Chat-family usage in which every field may independently be missing, null or a number. */
const chatUsage = fc.record(
  {
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
    prompt_tokens_details: fc.option(
      fc.record({ cached_tokens: fc.option(count), cache_write_tokens: count }, { requiredKeys: [] }),
    ),
    completion_tokens_details: fc.option(fc.record({ reasoning_tokens: fc.option(count) }, { requiredKeys: [] })),
  },
  { requiredKeys: ["prompt_tokens"] },
);

describe("readUsage: absent stays absent", () => {
  it("reports a count exactly when the route sent a number for it, and never derives one", () => {
    fc.assert(
      fc.property(chatUsage, (usage) => {
        const record = readUsage({ object: "chat.completion", usage });
        const sent = {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.total_tokens,
          cached_prompt_tokens: usage.prompt_tokens_details?.cached_tokens ?? undefined,
          cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens,
          reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? undefined,
        };
        for (const [field, value] of Object.entries(sent)) {
          if (value === undefined) expect(Object.hasOwn(record, field)).toBe(false);
          else expect(record[field as keyof typeof sent]).toBe(value);
        }
        expect(Object.hasOwn(record, "uncached_prompt_tokens")).toBe(false);
        expect(record.raw).toEqual([usage]);
      }),
    );
  });

  it("never mutates the response", () => {
    fc.assert(
      fc.property(chatUsage, (usage) => {
        const response = { object: "chat.completion", usage };
        const before = JSON.stringify(response);
        readUsage(response);
        expect(JSON.stringify(response)).toBe(before);
      }),
    );
  });

  it("keeps the record's keys in one order: shape, counts in USAGE_COUNT_FIELDS order, raw, flags", () => {
    const record = readUsage({
      usage: { total_tokens: 3, completion_tokens: 1, prompt_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } },
    });
    const counts = USAGE_COUNT_FIELDS.filter((field) => Object.hasOwn(record, field));
    expect(Object.keys(record)).toEqual(["shape", ...counts, "raw", "flags"]);
  });

  it("flags only inconsistent numbers and keeps them as sent", () => {
    fc.assert(
      fc.property(count, count, (prompt, cached) => {
        const record = readUsage({ usage: { prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: cached } } });
        expect(record.cached_prompt_tokens).toBe(cached);
        expect(record.flags.includes("cached_exceeds_prompt")).toBe(cached > prompt);
      }),
    );
  });
});

describe("readUsage: refusals name the value", () => {
  it("names the field path and the value", () => {
    expect(() => readUsage({ usage: { prompt_tokens: 5, prompt_tokens_details: { cached_tokens: -3 } } })).toThrow(
      "usage.prompt_tokens_details.cached_tokens must be a non-negative integer, got -3",
    );
  });

  it("refuses counts beyond the safe integer range", () => {
    expect(thrownCode(() => readUsage({ usage: { prompt_tokens: 2 ** 53 } }))).toBe("USAGE_INVALID_FIELD");
  });

  it("names an unknown provider", () => {
    expect(() => readUsage({ usage: {} }, { provider: "claude" as never })).toThrow(/"claude"/);
  });

  it("names the keys of usage it cannot place", () => {
    expect(() => readUsage({ usage: { tokens_in: 1 } })).toThrow(/tokens_in/);
  });

  it("an empty usage object under a declared provider is no counts, not a mismatch", () => {
    expect(readUsage({ usage: {} }, { provider: "anthropic" })).toStrictEqual({ shape: "anthropic", raw: [{}], flags: [] });
  });

  it("a bare response with nothing to go by is unknown with no counts", () => {
    expect(readUsage({ id: "x" })).toStrictEqual({ shape: "unknown", raw: [], flags: [] });
  });
});

describe("readUsage: options and mismatch messages", () => {
  it("takes null options as no options", () => {
    expect(readUsage({ usage: { prompt_tokens: 1 } }, null as never).shape).toBe("openai_chat");
  });

  it("names the declared provider and the detected shape when they disagree", () => {
    expect(() => readUsage({ type: "message", usage: { input_tokens: 1 } }, { provider: "deepseek" })).toThrow(
      "provider deepseek was declared but the response reads as anthropic",
    );
  });

  it("names the usageMetadata path of a bad Gemini count", () => {
    expect(() => readUsage({ usageMetadata: { promptTokenCount: -1 } })).toThrow(
      "usageMetadata.promptTokenCount must be a non-negative integer, got -1",
    );
  });
});
