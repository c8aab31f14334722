import { describe, expect, it } from "vitest";
import { CellDisplays, type CellDisplay } from "./display.js";

const shown = (id: string, seq: number, text = "x") => ({ kind: "display" as const, id, seq, data: { "text/plain": text }, metadata: {} });
const cell = (dropped?: number) => ({ kind: "cell", ...(dropped === undefined ? {} : { displays_dropped: dropped }) });

describe("CellDisplays", () => {
  it("delivers a running cell's displays in order to its listener, and nothing after its completion", () => {
    const displays = new CellDisplays(true);
    const seen: CellDisplay[] = [];
    displays.started("c-1", (d) => seen.push(d));
    expect(displays.display(shown("c-1", 0, "a"))).toBeNull();
    expect(displays.display(shown("c-1", 1, "b"))).toBeNull();
    expect(seen).toEqual([
      { id: "c-1", seq: 0, data: { "text/plain": "a" }, metadata: {} },
      { id: "c-1", seq: 1, data: { "text/plain": "b" }, metadata: {} },
    ]);
    expect(displays.completed("c-1", cell(0))).toBeNull();
    expect(displays.display(shown("c-1", 2))).toMatch(/ENVELOPE_DISPLAY_AFTER_COMPLETED/);
    expect(seen).toHaveLength(2);
  });

  it("names the rule broken: not negotiated, out of order, unknown operation, displays_dropped", () => {
    const off = new CellDisplays(false);
    expect(off.negotiated).toBe(false);
    off.started("c-1", undefined);
    expect(off.display(shown("c-1", 0))).toMatch(/ENVELOPE_DISPLAY_NOT_NEGOTIATED/);
    expect(off.completed("c-1", cell(0))).toMatch(/ENVELOPE_DISPLAY_NOT_NEGOTIATED/);
    const on = new CellDisplays(true);
    on.started("c-1", undefined);
    expect(on.display(shown("c-1", 1))).toMatch(/ENVELOPE_DISPLAY_SEQUENCE/);
    expect(on.display(shown("c-2", 0))).toMatch(/ENVELOPE_DISPLAY_UNKNOWN_OPERATION/);
    expect(on.completed("c-1", cell())).toMatch(/ENVELOPE_MISSING_FIELD/);
    on.started("c-3", undefined);
    expect(on.completed("c-3", cell(1))).toMatch(/ENVELOPE_DISPLAY_DROPPED/);
  });

  it("a cell the host ended (no result) is over without a check", () => {
    const displays = new CellDisplays(true);
    displays.started("c-1", undefined);
    expect(displays.completed("c-1")).toBeNull();
    expect(displays.display(shown("c-1", 0))).toMatch(/ENVELOPE_DISPLAY_AFTER_COMPLETED/);
  });

  it("a listener that throws does not make the worker's message a violation", () => {
    const displays = new CellDisplays(true);
    displays.started("c-1", () => {
      throw new Error("store down");
    });
    expect(displays.display(shown("c-1", 0))).toBeNull();
    expect(displays.display(shown("c-1", 1))).toBeNull();
  });
});
