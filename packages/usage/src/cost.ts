import type { UsageCounts } from "./record.js";

/** The kinds of token count a route prices (C23 `"prices"` in routes.json). */
export const PRICE_KINDS = ["input", "cache_read", "cache_write", "output"] as const;

/** One of PRICE_KINDS. */
export type PriceKind = (typeof PRICE_KINDS)[number];

/** A route's prices: USD per million tokens of each kind it names. */
export type UsagePrices = { [K in PriceKind]?: number };

/** One priced term of a cost: tokens of a kind times its price. */
export interface CostTerm {
  kind: PriceKind;
  tokens: number;
  usd_per_mtok: number;
  usd: number;
}

/** What one request cost at a route's prices, with the arithmetic spelled out. */
export interface UsageCost {
  usd: number;
  terms: CostTerm[];
  /** The whole computation in one line, e.g. `(1,200 input × $3 + 300 output × $15) / 1,000,000 = $0.0081`. */
  formula: string;
}

/**
 * The tokens of each kind a request was billed for. Plain input is the route's own uncached count
 * when it sent one (Anthropic's `input_tokens`), else the prompt less what was read from and
 * written to cache (our arithmetic: OpenAI-style prompts include both). Null when a count the
 * cost needs was not reported (no prompt count, no completion count): then there is no cost.
 */
export function billedTokens(usage: UsageCounts): Record<PriceKind, number> | null {
  const read = usage.cached_prompt_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const input = usage.uncached_prompt_tokens ?? (usage.prompt_tokens === undefined ? undefined : Math.max(0, usage.prompt_tokens - read - write));
  if (input === undefined || usage.completion_tokens === undefined) return null;
  return { input, cache_read: read, cache_write: write, output: usage.completion_tokens };
}

// Digits grouped by hand: toLocaleString goes through ICU, ~50 µs a call, on every request of a page.
const count = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const dollars = (n: number) => `$${Number(n.toPrecision(6))}`;

/**
 * A request's cost at `prices` (USD per million tokens), or null: no usage, no prices, a count the
 * cost needs absent, or tokens of a kind the route has no price for (no price, no cost: a guess
 * would be worse than nothing). Kinds with no tokens are left out of the terms.
 */
export function costOf(usage: UsageCounts | null | undefined, prices: UsagePrices | null | undefined): UsageCost | null {
  if (!usage || !prices) return null;
  const billed = billedTokens(usage);
  if (!billed) return null;
  const terms: CostTerm[] = [];
  for (const kind of PRICE_KINDS) {
    const tokens = billed[kind];
    if (tokens === 0) continue;
    const price = prices[kind];
    if (price === undefined) return null;
    terms.push({ kind, tokens, usd_per_mtok: price, usd: (tokens * price) / 1_000_000 });
  }
  const usd = terms.reduce((sum, t) => sum + t.usd, 0);
  const sum = terms.length === 0 ? "0" : terms.map((t) => `${count(t.tokens)} ${t.kind} × ${dollars(t.usd_per_mtok)}`).join(" + ");
  return { usd, terms, formula: `(${sum}) / 1,000,000 = ${dollars(usd)}` };
}
