import { describe, expect, it } from "vitest";
import { billedTokens, costOf } from "./cost.js";

const prices = { input: 3, cache_read: 0.3, cache_write: 3.75, output: 15 };

describe("costOf (C23)", () => {
  it("prices an OpenAI-style prompt: plain input is the prompt less the cached tokens", () => {
    const cost = costOf({ prompt_tokens: 2006, cached_prompt_tokens: 1920, completion_tokens: 300 }, prices)!;
    expect(cost.terms).toEqual([
      { kind: "input", tokens: 86, usd_per_mtok: 3, usd: (86 * 3) / 1e6 },
      { kind: "cache_read", tokens: 1920, usd_per_mtok: 0.3, usd: (1920 * 0.3) / 1e6 },
      { kind: "output", tokens: 300, usd_per_mtok: 15, usd: (300 * 15) / 1e6 },
    ]);
    expect(cost.usd).toBeCloseTo(86 * 3e-6 + 1920 * 0.3e-6 + 300 * 15e-6, 12);
    expect(cost.formula).toBe("(86 input × $3 + 1,920 cache_read × $0.3 + 300 output × $15) / 1,000,000 = $0.005334");
  });

  it("takes Anthropic's own uncached count as plain input, with cache writes priced apart", () => {
    expect(billedTokens({ uncached_prompt_tokens: 472, cached_prompt_tokens: 2048, cache_write_tokens: 100, completion_tokens: 89 })).toEqual({ input: 472, cache_read: 2048, cache_write: 100, output: 89 });
    expect(costOf({ uncached_prompt_tokens: 472, cached_prompt_tokens: 2048, cache_write_tokens: 100, completion_tokens: 89 }, prices)!.usd).toBeCloseTo((472 * 3 + 2048 * 0.3 + 100 * 3.75 + 89 * 15) / 1e6, 12);
  });

  it("no price, no cost: no prices, no usage, an absent count, or tokens of a kind left unpriced", () => {
    expect(costOf({ prompt_tokens: 10, completion_tokens: 1 }, undefined)).toBeNull();
    expect(costOf(null, prices)).toBeNull();
    expect(costOf({ completion_tokens: 1 }, prices)).toBeNull();
    expect(costOf({ prompt_tokens: 10 }, prices)).toBeNull();
    expect(costOf({ prompt_tokens: 10, cached_prompt_tokens: 5, completion_tokens: 1 }, { input: 3, output: 15 })).toBeNull();
    // A kind with no tokens needs no price.
    expect(costOf({ prompt_tokens: 10, cached_prompt_tokens: 0, completion_tokens: 1 }, { input: 3, output: 15 })!.usd).toBeCloseTo(45e-6, 12);
  });

  it("never bills negative input when the route's counts contradict each other", () => {
    expect(billedTokens({ prompt_tokens: 10, cached_prompt_tokens: 20, completion_tokens: 0 })!.input).toBe(0);
  });
});
