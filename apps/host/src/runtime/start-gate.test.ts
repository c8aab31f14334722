import { describe, expect, it } from "vitest";
import { availableParallelism } from "node:os";
import { defaultStartConcurrency, StartGate } from "./start-gate";

// The start gate alone: a bound on concurrent workbench starts, in arrival order, never a lost turn.
function deferred() {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("StartGate", () => {
  it("runs at most `limit` starts at once and the rest in arrival order", async () => {
    const gate = new StartGate(2);
    const order: number[] = [];
    const gates = Array.from({ length: 5 }, () => deferred());
    const runs = gates.map((g, i) => gate.run(async () => (order.push(i), await g.promise, i)));
    await Promise.resolve();
    expect(order).toEqual([0, 1]);
    expect(gate.queued).toBe(3);
    gates[1]!.resolve();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([0, 1, 2]);
    for (const g of gates) g.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(gate.peak).toBe(2);
    expect(gate.queued).toBe(0);
  });

  it("gives the turn back when a start fails", async () => {
    const gate = new StartGate(1);
    await expect(gate.run(async () => Promise.reject(new Error("spawn failed")))).rejects.toThrow("spawn failed");
    expect(await gate.run(async () => "next")).toBe("next");
    expect(gate.peak).toBe(1);
  });

  it("refuses a limit that is not a positive integer", () => {
    expect(() => new StartGate(0)).toThrow(RangeError);
    expect(() => new StartGate(1.5)).toThrow(new RangeError("start concurrency must be a positive integer, got 1.5"));
  });

  it("allows two starts per core by default, at least two", () => {
    const cores = availableParallelism();
    expect(defaultStartConcurrency()).toBe(2 * cores);
    expect(new StartGate().limit).toBe(2 * cores);
    expect(new StartGate().limit).toBeGreaterThanOrEqual(2);
  });
});
