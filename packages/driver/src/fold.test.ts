import { describe, expect, it } from "vitest";
import { recordsAt, routeOf } from "../test/helpers/records.js";
import { composeFrontierBlock } from "./frontier.js";
import { RequestAssembler } from "./assembler.js";
import { estimateTokens, FOLD_TARGET, needsBudgetFold, planBudgetFold } from "./fold.js";
import type { FrontierRef, TranscriptRecord } from "./records.js";

const T = Date.UTC(2026, 11, 1);
const { input, reply, cell } = recordsAt(T);
const blockOf = (text: string) => () => text;

describe("budget folds (C12)", () => {
  it("triggers past 80% of the context by the bytes/4 estimate", () => {
    expect(estimateTokens(4001)).toBe(1001);
    expect(needsBudgetFold(3200, 1000)).toBe(false);
    expect(needsBudgetFold(3204, 1000)).toBe(true);
  });

  it("covers the fewest oldest records that bring the request under 50%, never between a call and its result", () => {
    const big = "x".repeat(400);
    const records = [input(1, big), reply(2, "a"), cell(3, "a", big), reply(4, "b"), cell(5, "b", big), input(6, big), reply(7, "c"), cell(8, "c", big)];
    // ~5 x 430 bytes of records, and ~850 of body around them (the route's fields and python tool,
    // the header, the framed block): with 1,000 tokens of context, 50% is 2,000 bytes. Through 3
    // leaves ~1,500 bytes of records, which fit beside header and block alone but not beside the
    // whole body; through 5 is the fewest that fits.
    const through = planBudgetFold({ route: routeOf(1000), header: "h".repeat(100), block: blockOf("b".repeat(100)), records, createdAtMs: T });
    expect(through).not.toBeNull();
    expect([1, 3, 5, 6]).toContain(through);
    const kept = records.filter((r) => r.seq > through!);
    expect(kept[0]!.kind === "cell" || kept[0]!.kind === "refusal").toBe(false);
    expect(through).toBe(5);
    const after = (cut: number) => {
      const a = new RequestAssembler(routeOf(1000), "h".repeat(100), { frontier_id: "f", covers_through: cut, block: "b".repeat(100), created_at_ms: T });
      a.append(records.filter((r) => r.seq > cut));
      return estimateTokens(Buffer.byteLength(a.body().text));
    };
    expect(after(5)).toBeLessThan(500);
    expect(after(3)).toBeGreaterThanOrEqual(500);
  });

  it("covers as much as it can when no cut reaches the target, and nothing when there is no cut", () => {
    const big = "x".repeat(4000);
    const plan = (records: TranscriptRecord[]) => planBudgetFold({ route: routeOf(500), header: "", block: blockOf(""), records, createdAtMs: T });
    expect(plan([input(1, big), input(2, big), input(3, big)])).toBe(2);
    expect(plan([reply(1, "a"), cell(2, "a", big)])).toBeNull();
  });

  it.each(["chat", "responses", "anthropic"] as const)(
    "sizes the body that will be sent (%s): every fold lands under half the context, and steady growth folds at most ceil(growth / 0.3 context) times",
    (api) => {
      const context = 2000;
      const route = routeOf(context, api);
      const header = "Follow the contract. ".repeat(60);
      // The host's block depends on the cut (its last cell, its pending inputs): here its size does too.
      const block = (through: number) => `## last cell\n${"z".repeat(150 + (through % 5) * 40)}\n`;
      const all: TranscriptRecord[] = [input(1, "begin")];
      let frontier: FrontierRef | null = null;
      let assembler = new RequestAssembler(route, header, null);
      const unfolded = new RequestAssembler(route, header, null);
      let firstUnfolded = 0;
      let folds = 0;
      for (let step = 0; step < 40; step++) {
        assembler.append(all.filter((r) => r.seq > assembler.through));
        unfolded.append(all.filter((r) => r.seq > unfolded.through));
        if (step === 0) firstUnfolded = Buffer.byteLength(unfolded.body().text);
        const bytes = Buffer.byteLength(assembler.body().text);
        if (needsBudgetFold(bytes, context)) {
          const after = all.filter((r) => r.seq > (frontier?.covers_through ?? 0));
          const through = planBudgetFold({ route, header, block, records: after, createdAtMs: T });
          expect(through).not.toBeNull();
          frontier = { frontier_id: `f${folds}`, covers_through: through!, block: block(through!), created_at_ms: T };
          assembler = new RequestAssembler(route, header, frontier);
          assembler.append(all.filter((r) => r.seq > through!));
          folds += 1;
          expect(estimateTokens(Buffer.byteLength(assembler.body().text))).toBeLessThan(FOLD_TARGET * context);
        }
        // The model's reply and its cell: steady growth of 250..450 bytes of output a step.
        const seq = all.at(-1)!.seq;
        all.push(reply(seq + 1, `k${step}`), cell(seq + 2, `k${step}`, "o".repeat(250 + ((step * 37) % 200))));
      }
      const growth = estimateTokens(Buffer.byteLength(unfolded.body().text)) - estimateTokens(firstUnfolded);
      expect(folds).toBeGreaterThan(1);
      expect(folds).toBeLessThanOrEqual(Math.ceil(growth / (0.3 * context)));
    },
  );

  it("composes the block from sections in order, (none) for an empty one", () => {
    expect(composeFrontierBlock([{ title: "pending inputs", lines: ["[t · operator]\nhi"] }, { title: "open waits", lines: [] }])).toBe(
      "This transcript was folded: the records before this point are summarized by the host below; the records after it follow as they happened.\n## pending inputs\n[t · operator]\nhi\n## open waits\n(none)\n",
    );
  });
});
