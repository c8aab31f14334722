import { describe, expect, it } from "vitest";
import { LiveOutputs, type CellOutput } from "./live-output.js";

const out = (id: string, seq: number, text = "x\n") => ({ kind: "output" as const, id, seq, stream: "stdout" as const, text, dropped_bytes: 0 });

describe("LiveOutputs", () => {
  it("delivers a running cell's outputs in order to its listener, and nothing after its completion", () => {
    const live = new LiveOutputs(true);
    const seen: CellOutput[] = [];
    live.started("c-1", (o) => seen.push(o));
    expect(live.output(out("c-1", 0, "a"))).toBeNull();
    expect(live.output(out("c-1", 1, "b"))).toBeNull();
    expect(seen.map((o) => [o.seq, o.text])).toEqual([[0, "a"], [1, "b"]]);
    live.completed("c-1");
    expect(live.output(out("c-1", 2))).toMatch(/ENVELOPE_OUTPUT_AFTER_COMPLETED/);
  });

  it("names the rule broken: not negotiated, out of order, unknown operation", () => {
    const off = new LiveOutputs(false);
    off.started("c-1", undefined);
    expect(off.output(out("c-1", 0))).toMatch(/ENVELOPE_OUTPUT_NOT_NEGOTIATED/);
    const on = new LiveOutputs(true);
    on.started("c-1", undefined);
    expect(on.output(out("c-1", 1))).toMatch(/ENVELOPE_OUTPUT_SEQUENCE/);
    expect(on.output(out("c-2", 0))).toMatch(/ENVELOPE_OUTPUT_UNKNOWN_OPERATION/);
  });

  it("a listener that throws does not make the worker's message a violation", () => {
    const live = new LiveOutputs(true);
    live.started("c-1", () => {
      throw new Error("client gone");
    });
    expect(live.output(out("c-1", 0))).toBeNull();
    expect(live.output(out("c-1", 1))).toBeNull();
  });

  it("a cell without a listener still has its sequence checked", () => {
    const live = new LiveOutputs(true);
    live.started("c-1", undefined);
    expect(live.output(out("c-1", 0))).toBeNull();
    expect(live.output(out("c-1", 0))).toMatch(/ENVELOPE_OUTPUT_SEQUENCE/);
  });
});
