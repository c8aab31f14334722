import { describe, expect, it } from "vitest";
import { recordsAt, routeOf } from "../test/helpers/records.js";
import { RequestAssembler } from "./assembler.js";
import { estimateTokens, FOLD_TARGET, planBudgetFold, planBudgetFoldAsync } from "./fold.js";
import type { TranscriptRecord } from "./records.js";

const T = Date.UTC(2026, 11, 2);
const { input, reply, cell } = recordsAt(T);
const refusal = (seq: number, call: string): TranscriptRecord => ({ seq, kind: "refusal", request_id: "r", call_id: call, reason: `no ${"é".repeat(seq * 7)}`, at_ms: T });

// A refusal answers its call as a cell does: no cut between them. Text sizes differ so every cut has its own size.
const records: TranscriptRecord[] = [
  input(1, "a".repeat(90)),
  reply(2, "a"),
  refusal(3, "a"),
  input(4, "ü".repeat(40)),
  reply(5, "b"),
  cell(6, "b", "o".repeat(130)),
  input(7, "c".repeat(70)),
  reply(8, "c"),
  cell(9, "c", "p".repeat(50)),
];
// A short block (a few bytes) that depends on the cut, as the host's does.
const block = (through: number) => "b".repeat(through % 3);
const header = "Follow the contract.";

describe.each(["chat", "responses", "anthropic"] as const)("planBudgetFold at the edges of its target (%s)", (api) => {
  // The estimate of the request actually assembled after a fold covering through `cut` with `text` as its block.
  const memo = new Map<string, number>();
  const sent = (cut: number, text: string) => {
    const known = memo.get(`${cut}:${text}`);
    if (known !== undefined) return known;
    const assembler = new RequestAssembler(routeOf(1000, api), header, { frontier_id: "f", covers_through: cut, block: text, created_at_ms: T });
    assembler.append(records.filter((r) => r.seq > cut));
    const tokens = estimateTokens(Buffer.byteLength(assembler.body().text, "utf8"));
    memo.set(`${cut}:${text}`, tokens);
    return tokens;
  };
  // The cuts a fold may take: never before a cell or a refusal (their call stays in the same request).
  const cuts = [1, 3, 4, 6, 7];

  it("takes the first cut whose request falls under half the context, and writes a block only for cuts whose records alone do", async () => {
    // Every context whose half is within a token of some cut's size (with its block or an empty one).
    const sizes = records.slice(0, -1).flatMap((r) => [sent(r.seq, ""), sent(r.seq, block(r.seq))]);
    const contexts = [...new Set(sizes.flatMap((s) => [2 * s - 2, 2 * s - 1, 2 * s, 2 * s + 1, 2 * s + 2, 2 * s + 3]))].sort((a, b) => a - b);
    let reached = 0;
    for (const context of contexts) {
      const target = FOLD_TARGET * context;
      const asked: number[] = [];
      const through = planBudgetFold({ route: routeOf(context, api), header, block: (c) => (asked.push(c), block(c)), records, createdAtMs: T });
      const fits = cuts.find((c) => sent(c, block(c)) < target);
      if (fits !== undefined) reached += 1;
      expect({ context, through }).toEqual({ context, through: fits ?? 7 });
      expect({ context, asked }).toEqual({ context, asked: cuts.filter((c) => c <= (fits ?? 7) && sent(c, "") < target) });
      // The async plan (a host reading blocks from an async store) cuts at the same record and asks for the same blocks.
      const askedAsync: number[] = [];
      const throughAsync = await planBudgetFoldAsync({ route: routeOf(context, api), header, block: async (c) => (askedAsync.push(c), block(c)), records, createdAtMs: T });
      expect({ context, throughAsync, askedAsync }).toEqual({ context, throughAsync: through, askedAsync: asked });
    }
    expect(reached).toBeGreaterThan(10);
    expect(reached).toBeLessThan(contexts.length);
  });
});
