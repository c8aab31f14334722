import { describe, expect, it } from "vitest";
import { cellsOf, MAX_CELL_SOURCE_BYTES } from "./cells.js";

const reply = (calls: Array<{ id: string; name: string; arguments: string }>, text = "") => ({ text, calls, stop: null });

describe("cellsOf", () => {
  it("takes each python call's code in tool mode", () => {
    expect(cellsOf(reply([{ id: "a", name: "python", arguments: '{"code":"1+1"}' }, { id: "b", name: "python", arguments: '{"code":"2"}' }]), "tool")).toEqual([
      { call_id: "a", code: "1+1" },
      { call_id: "b", code: "2" },
    ]);
  });

  it("refuses another tool, bad JSON and a missing code, saying why", () => {
    const cells = cellsOf(
      reply([
        { id: "a", name: "bash", arguments: "{}" },
        { id: "b", name: "python", arguments: '{"code": ' },
        { id: "c", name: "python", arguments: '{"source":"x"}' },
      ]),
      "tool",
    );
    expect(cells.map((c) => ("refused" in c ? c.refused.slice(0, 24) : null))).toEqual(["unknown tool \"bash\": the", "the arguments are not va", "the arguments must be a "]);
  });

  it("refuses a cell over 262,144 bytes and keeps one exactly at the limit", () => {
    const at = "x".repeat(MAX_CELL_SOURCE_BYTES);
    expect(cellsOf(reply([{ id: "a", name: "python", arguments: JSON.stringify({ code: at }) }]), "tool")).toEqual([{ call_id: "a", code: at }]);
    const over = `${at}é`;
    const [cell] = cellsOf(reply([{ id: "a", name: "python", arguments: JSON.stringify({ code: over }) }]), "tool");
    expect(cell).toEqual({ call_id: "a", refused: expect.stringContaining(`is ${MAX_CELL_SOURCE_BYTES + 2} bytes; the limit is 262144 bytes`) });
  });

  it("takes the first fenced python block in fence mode, and none without one", () => {
    const text = "Let me look.\n```python\nimport os\nos.getcwd()\n```\nthen\n```python\nsecond()\n```";
    expect(cellsOf(reply([], text), "fence")).toEqual([{ call_id: null, code: "import os\nos.getcwd()\n" }]);
    expect(cellsOf(reply([], "no code here\n```\nplain\n```"), "fence")).toEqual([]);
    expect(cellsOf(reply([], "```python\nx=1\n```"), "tool")).toEqual([]);
  });
});
