import { describe, expect, it } from "vitest";
import { RequestAssembler } from "./assembler.js";
import { DriverError } from "./errors.js";
import { parseRoute } from "./routes.js";

// Limits pinned at the edge and one past it (issue 25): a limit tested far from its edge lets an
// off-by-one through.
const T = Date.UTC(2026, 11, 1);
const input = (seq: number) => ({ seq, kind: "input" as const, event: { source: "operator", received_at_ms: T, payload: { text: `x${seq}` } } });
const base = { name: "r", api: "chat", base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null };

describe("RequestAssembler.append", () => {
  it("refuses a record whose seq equals the last appended, and one below it", () => {
    const route = parseRoute({ ...base, context_tokens: 1000 });
    const assembler = new RequestAssembler(route, "h\n", null);
    assembler.append([input(1), input(2)]);
    expect(() => assembler.append([input(2)])).toThrow(/record 2 is not after 2/);
    expect(() => assembler.append([input(1)])).toThrow(DriverError);
    assembler.append([input(3)]);
    expect(assembler.body().text).toContain("x3");
  });

  it("refuses a batch that repeats a seq inside itself", () => {
    const assembler = new RequestAssembler(parseRoute({ ...base, context_tokens: 1000 }), "h\n", null);
    expect(() => assembler.append([input(5), input(5)])).toThrow(/record 5 is not after 5/);
  });
});

describe("route context_tokens", () => {
  it("accepts 256, the smallest window, and refuses 255", () => {
    expect(parseRoute({ ...base, context_tokens: 256 }).context_tokens).toBe(256);
    expect(() => parseRoute({ ...base, context_tokens: 255 })).toThrow(/context_tokens must be an integer >= 256, got 255/);
  });
});

describe("a cell after a lost namespace (C17, C19)", () => {
  it("says why the names are gone, right under its stamp; a cell without the mark reads as before", async () => {
    const { renderCellResult } = await import("./render.js");
    const base = { execution_id: "e", status: "ok" as const, output: [{ stream: "result", text: "1" }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T, ended_at_ms: T + 5 };
    const plain = renderCellResult(base);
    const lost = renderCellResult({ ...base, namespace_lost: "idle_culled" });
    expect(lost).toBe(plain.replace("]\n", "]\n[namespace lost (idle_culled): this cell ran in a new worker; names defined by earlier cells are gone]\n"));
    expect(plain).not.toContain("namespace");
  });
});
