import { renderRecord } from "./assemble.js";
import { RequestAssembler, wireItems } from "./assembler.js";
import type { TranscriptRecord } from "./records.js";
import type { Route } from "./routes.js";

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

/** What a budget fold is planned from: the request that would follow it, before its records are chosen. */
export interface BudgetFoldInput<B = string> {
  /** The route the request goes to: its tools, options and wire shape are part of the body. */
  route: Route;
  /** The header text the fold pins. */
  header: string;
  /** The frontier block for a fold covering through `seq` (the host writes it; it depends on the cut). */
  block: (coversThrough: number) => B;
  /** The records after the current frontier, in order (the ones the request would carry unfolded). */
  records: readonly TranscriptRecord[];
  /** When the frontier is written (its frame's stamp). */
  createdAtMs: number;
}

/**
 * The record a budget fold covers through: the fewest oldest records such that the request that
 * follows the fold, sized as the body that will be sent (the route's fields and tools, the pinned
 * header, the framed block, the records left in the route's wire shape, a cache marker), falls
 * under 50% of the context. A fold never separates a reply from the results of its calls (a tool
 * result needs its call in the same request), so it cuts only before an input, a reply or an
 * observation. Null when no cut point exists. When no cut reaches the target, the latest cut is
 * taken: the most the fold can cover.
 */
export function planBudgetFold(input: BudgetFoldInput): number | null {
  const plan = foldPlan(input);
  let step = plan.next();
  while (!step.done) step = plan.next(input.block(step.value));
  return step.value;
}

/** As {@link planBudgetFold}, for a host whose blocks are read from an async log. */
export async function planBudgetFoldAsync(input: BudgetFoldInput<Promise<string>>): Promise<number | null> {
  const plan = foldPlan(input);
  let step = plan.next();
  while (!step.done) step = plan.next(await input.block(step.value));
  return step.value;
}

/** The plan itself: it yields each cut whose block it needs and is given the block back, so one plan serves a sync and an async host. */
function* foldPlan(input: Omit<BudgetFoldInput<unknown>, "block">): Generator<number, number | null, string> {
  const { route, records } = input;
  const target = FOLD_TARGET * route.context_tokens;
  // Each record's wire items, serialized as the assembler writes them: the body after a cut is the
  // body with the block and no records, plus these parts and one comma each.
  const calls = new Set<string>();
  // Stryker disable next-line StringLiteral: "" is Node's default encoding, utf8, for a string
  const partBytes = records.map((record) => wireItems(route, renderRecord(record, calls)).reduce<number>((n, item) => n + Buffer.byteLength(JSON.stringify(item), "utf8") + 1, 0));
  // Stryker disable next-line StringLiteral: the frontier id is not part of the body, and "" is Node's default encoding, utf8
  const bodyWith = (block: string) => Buffer.byteLength(new RequestAssembler(route, input.header, { frontier_id: "", covers_through: 0, block, created_at_ms: input.createdAtMs }).body().text, "utf8");
  // The block's least size (an empty one): a cut whose records alone miss the target needs no block written.
  const floor = bodyWith("");
  let remaining = partBytes.reduce((a, b) => a + b, 0);
  let best: number | null = null;
  for (let i = 0; i < records.length - 1; i++) {
    remaining -= partBytes[i]!;
    const next = records[i + 1]!;
    if (next.kind === "cell" || next.kind === "refusal") continue;
    best = records[i]!.seq;
    if (estimateTokens(floor + remaining) >= target) continue;
    if (estimateTokens(bodyWith(yield best) + remaining) < target) return best;
  }
  return best;
}
