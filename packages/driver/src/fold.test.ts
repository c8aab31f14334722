import { describe, expect, it } from "vitest";
import { composeFrontierBlock } from "./frontier.js";
import { estimateTokens, needsBudgetFold, planBudgetFold } from "./fold.js";
import type { TranscriptRecord } from "./records.js";

const T = Date.UTC(2026, 11, 1);
const input = (seq: number, text: string): TranscriptRecord => ({ seq, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text } } });
const reply = (seq: number, call: string): TranscriptRecord => ({ seq, kind: "reply", request_id: `r${seq}`, reply: { text: "", calls: [{ id: call, name: "python", arguments: '{"code":"1"}' }], stop: null } });
const cell = (seq: number, call: string, out: string): TranscriptRecord => ({
  seq,
  kind: "cell",
  request_id: "r",
  call_id: call,
  result: { execution_id: `e${seq}`, status: "ok", output: [{ stream: "stdout", text: out }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T, ended_at_ms: T + 1 },
});

describe("budget folds (C12)", () => {
  it("triggers past 80% of the context by the bytes/4 estimate", () => {
    expect(estimateTokens(4001)).toBe(1001);
    expect(needsBudgetFold(3200, 1000)).toBe(false);
    expect(needsBudgetFold(3204, 1000)).toBe(true);
  });

  it("covers the fewest oldest records that bring the request under 50%, never between a call and its result", () => {
    const big = "x".repeat(400);
    const records = [input(1, big), reply(2, "a"), cell(3, "a", big), reply(4, "b"), cell(5, "b", big), input(6, big), reply(7, "c"), cell(8, "c", big)];
    // ~5 x 430 bytes of records + header: with 1,000 tokens of context, 50% is 2,000 bytes.
    const through = planBudgetFold({ headerBytes: 100, blockBytes: 100, records, contextTokens: 1000 });
    expect(through).not.toBeNull();
    expect([1, 3, 5, 6]).toContain(through);
    const kept = records.filter((r) => r.seq > through!);
    expect(kept[0]!.kind === "cell" || kept[0]!.kind === "refusal").toBe(false);
    expect(through).toBe(3);
  });

  it("covers as much as it can when no cut reaches the target, and nothing when there is no cut", () => {
    const big = "x".repeat(4000);
    expect(planBudgetFold({ headerBytes: 0, blockBytes: 0, records: [input(1, big), input(2, big), input(3, big)], contextTokens: 500 })).toBe(2);
    expect(planBudgetFold({ headerBytes: 0, blockBytes: 0, records: [reply(1, "a"), cell(2, "a", big)], contextTokens: 500 })).toBeNull();
  });

  it("composes the block from sections in order, (none) for an empty one", () => {
    expect(composeFrontierBlock([{ title: "pending inputs", lines: ["[t · operator]\nhi"] }, { title: "open waits", lines: [] }])).toBe(
      "This transcript was folded: the records before this point are summarized by the host below; the records after it follow as they happened.\n## pending inputs\n[t · operator]\nhi\n## open waits\n(none)\n",
    );
  });
});
