import { renderRecord } from "./assemble.js";
import type { TranscriptRecord } from "./records.js";

/** The driver folds on its own when a request's estimate passes this share of the route's context (C12). */
export const FOLD_TRIGGER = 0.8;
/** A budget fold covers the oldest records until the request falls under this share. */
export const FOLD_TARGET = 0.5;

/** The estimate C12 names: UTF-8 bytes / 4. */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 4);
}

/** Whether a request of `bodyBytes` passes 80% of `contextTokens`. */
export function needsBudgetFold(bodyBytes: number, contextTokens: number): boolean {
  return estimateTokens(bodyBytes) > FOLD_TRIGGER * contextTokens;
}

/**
 * The record a budget fold covers through: the fewest oldest records such that the header, the
 * block and the records left fall under 50% of the context. A fold never separates a reply from
 * the results of its calls (a tool result needs its call in the same request), so it cuts only
 * before an input, a reply or an observation. Null when no cut point exists. When no cut reaches
 * the target, the latest cut is taken: the most the fold can cover.
 */
export function planBudgetFold(input: { headerBytes: number; blockBytes: number; records: TranscriptRecord[]; contextTokens: number }): number | null {
  const { records } = input;
  const sizes: number[] = [];
  const calls = new Set<string>();
  for (const record of records) sizes.push(Buffer.byteLength(JSON.stringify(renderRecord(record, calls)), "utf8"));
  let remaining = sizes.reduce((a, b) => a + b, 0);
  const fixed = input.headerBytes + input.blockBytes;
  let best: number | null = null;
  for (let i = 0; i < records.length - 1; i++) {
    remaining -= sizes[i]!;
    const next = records[i + 1]!;
    if (next.kind === "cell" || next.kind === "refusal") continue;
    best = records[i]!.seq;
    if (estimateTokens(fixed + remaining) <= FOLD_TARGET * input.contextTokens) return best;
  }
  return best;
}
