import type { CellCompletion, Worker } from "@klbr/supervisor";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveExecution } from "./live-execution";
import { Workbench } from "./workbench";

// The workbench alone: its foreground slot (one cell at a time, in arrival order), the idle time
// culling counts from, the scope a host request is checked against, and one cell's run over a
// stand-in worker.
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const live = (over: Partial<LiveExecution> = {}): LiveExecution => ({ id: "ex-1", sessionId: "s", generation: "g-1", yielded: false, ended: false, hooksPin: null, ...over });

describe("Workbench slot", () => {
  it("gives the slot to one holder at a time, in arrival order", async () => {
    const bench = new Workbench("s");
    const order: string[] = [];
    const first = await bench.acquire();
    const second = bench.acquire().then((release) => (order.push("second"), release));
    const third = bench.acquire().then((release) => (order.push("third"), release));
    await turn();
    expect(order).toEqual([]);
    expect(bench.idle).toBe(false);
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    expect(bench.idle).toBe(true);
  });

  it("counts a queued claim as not idle, and a release given twice once", async () => {
    const bench = new Workbench("s");
    expect(bench.idle).toBe(true);
    const a = await bench.acquire();
    const b = bench.acquire();
    a();
    a(); // twice: must not give back b's claim
    expect(bench.idle).toBe(false);
    (await b)();
    expect(bench.idle).toBe(true);
  });

  describe("lastActiveMs", () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());
    it("is set when the slot is taken and when it is given back", async () => {
      const bench = new Workbench("s");
      const created = performance.now();
      expect(bench.lastActiveMs).toBe(created);
      vi.advanceTimersByTime(1000);
      const release = await bench.acquire();
      expect(bench.lastActiveMs).toBe(created + 1000);
      vi.advanceTimersByTime(5000);
      release();
      expect(bench.lastActiveMs).toBe(created + 6000);
      vi.advanceTimersByTime(5000);
      release(); // a second call is not activity
      expect(bench.lastActiveMs).toBe(created + 6000);
    });
  });

  it("whenIdle resolves only when nobody holds or waits, every waiter at once", async () => {
    const bench = new Workbench("s");
    const seen: number[] = [];
    void bench.whenIdle().then(() => seen.push(1));
    void bench.whenIdle().then(() => seen.push(2));
    const a = await bench.acquire();
    const b = bench.acquire();
    a();
    for (let i = 0; i < 5; i++) await turn();
    expect(seen).toEqual([]);
    (await b)();
    for (let i = 0; i < 5 && seen.length < 2; i++) await turn();
    expect(seen).toEqual([1, 2]);
    // Settled once: a later release with no new waiter resolves nothing again.
    const c = await bench.acquire();
    c();
    await turn();
    expect(seen).toEqual([1, 2]);
  });

  it("whenIdle does not resolve when the slot is taken again in the same turn", async () => {
    const bench = new Workbench("s");
    let idle = false;
    void bench.whenIdle().then(() => (idle = true));
    const a = await bench.acquire();
    a();
    const b = bench.acquire(); // claims at once, before the idle check a turn later
    for (let i = 0; i < 5; i++) await turn();
    expect(idle).toBe(false);
    (await b)();
    for (let i = 0; i < 5 && !idle; i++) await turn();
    expect(idle).toBe(true);
  });
});

describe("Workbench.inScope", () => {
  function benchWith(generation: string | null) {
    const bench = new Workbench("s");
    if (generation !== null) bench.worker = { generation } as unknown as Worker;
    return bench;
  }

  it("accepts the live execution of the current generation only", () => {
    const bench = benchWith("g-1");
    expect(bench.generation).toBe("g-1");
    expect(bench.inScope("ex-1")).toBeNull(); // nothing live
    const l = live();
    bench.live = l;
    expect(bench.inScope("ex-1")).toBe(l);
    expect(bench.inScope("ex-2")).toBeNull();
    l.yielded = true;
    expect(bench.inScope("ex-1")).toBeNull();
    l.yielded = false;
    l.ended = true;
    expect(bench.inScope("ex-1")).toBeNull();
    l.ended = false;
    bench.worker = { generation: "g-2" } as unknown as Worker;
    expect(bench.inScope("ex-1")).toBeNull();
  });

  it("has no generation without a worker", () => {
    const bench = benchWith(null);
    expect(bench.generation).toBeNull();
    bench.live = live();
    expect(bench.inScope("ex-1")).toBeNull();
  });
});

describe("Workbench.run", () => {
  const completion = { id: "ex-1", status: "ok" } as unknown as CellCompletion;

  it("runs the cell on the worker with its id, its request handler and its output listener, live only meanwhile", async () => {
    const bench = new Workbench("s");
    const calls: unknown[] = [];
    let l = live();
    bench.worker = {
      generation: "g-1",
      execute: async (code: string, opts: Record<string, unknown>) => {
        calls.push([code, Object.keys(opts).sort(), opts.id]);
        expect(bench.live).toBe(l);
        expect(l.ended).toBe(false);
        return completion;
      },
    } as unknown as Worker;
    const onOutput = () => undefined;
    expect(await bench.run(l, "1 + 1", async () => null, onOutput, () => undefined)).toBe(completion);
    expect(calls).toEqual([["1 + 1", ["id", "onDisplay", "onHostRequest", "onOutput"], "ex-1"]]);
    expect(bench.live).toBeNull();
    expect(l.ended).toBe(true);
    // Without listeners none is passed (the worker then streams nothing for them).
    l = live({ id: "ex-2" });
    await bench.run(l, "2", async () => null);
    expect(calls[1]).toEqual(["2", ["id", "onHostRequest"], "ex-2"]);
  });

  it("ends the live execution when the worker throws", async () => {
    const bench = new Workbench("s");
    const l = live();
    bench.worker = { generation: "g-1", execute: async () => Promise.reject(new Error("worker died")) } as unknown as Worker;
    await expect(bench.run(l, "x", async () => null)).rejects.toThrow("worker died");
    expect(l.ended).toBe(true);
    expect(bench.live).toBeNull();
  });

  it("refuses to run without a worker", async () => {
    const bench = new Workbench("s");
    await expect(bench.run(live(), "x", async () => null)).rejects.toThrow("workbench has no worker");
    expect(bench.live).toBeNull();
  });
});
