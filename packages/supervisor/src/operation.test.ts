import { describe, expect, it } from "vitest";
import { IDENTIFIER, Operation } from "./operation.js";

describe("Operation", () => {
  it("settles once, aborts its signal, and reports ending within a wait", async () => {
    const op = new Operation<string>("c-1");
    const early = op.signal;
    expect(early.aborted).toBe(false);
    expect(await op.endsWithin(5)).toBe(false);
    expect(op.settle("first")).toBe(true);
    expect(op.settle("second")).toBe(false);
    expect(await op.promise).toBe("first");
    expect(op.result).toBe("first");
    expect(early.aborted).toBe(true);
    expect(op.signal.aborted).toBe(true);
    expect(await op.endsWithin(1000)).toBe(true);
  });

  it("IDENTIFIER follows C2", () => {
    expect(IDENTIFIER.test("a.b-c_9")).toBe(true);
    expect(IDENTIFIER.test("x".repeat(128))).toBe(true);
    expect(IDENTIFIER.test("x".repeat(129))).toBe(false);
    expect(IDENTIFIER.test("no space")).toBe(false);
    expect(IDENTIFIER.test("")).toBe(false);
  });
});
