import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nextCheckMs, watchCpu } from "./cpu-watch.js";

// The cgroup CPU limit's watch (C17) on vitest's fake clock: reads at the interval nextCheckMs
// says, the tree ended once it reached the limit (at the limit too), once, and nothing after a stop.
describe("watchCpu", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("reads at once, then when every CPU could have spent what is left, and ends the tree at the limit", async () => {
    const reads: number[] = [];
    let used = 0;
    const over: number[] = [];
    const t0 = Date.now();
    watchCpu(() => (reads.push(Date.now() - t0), used), 2000, (u) => over.push(u), 2);
    expect(reads).toEqual([0]);
    // 2000 ms left on 2 CPUs: 1000 ms, kept to 500.
    await vi.advanceTimersByTimeAsync(499);
    expect(reads).toEqual([0]);
    used = 1600;
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toEqual([0, 500]);
    // 400 ms left on 2 CPUs: 200 ms.
    used = 2000;
    await vi.advanceTimersByTimeAsync(199);
    expect(over).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toEqual([0, 500, 700]);
    expect(over).toEqual([2000]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reads).toHaveLength(3);
    expect(over).toEqual([2000]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("ends at once when the first read is past the limit", () => {
    const over: number[] = [];
    watchCpu(() => 5000, 2000, (u) => over.push(u), 1);
    expect(over).toEqual([5000]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("one ms short of the limit is not over", () => {
    const over: number[] = [];
    const stop = watchCpu(() => 1999, 2000, (u) => over.push(u), 1);
    expect(over).toEqual([]);
    stop();
  });

  it("stops reading when the group is gone", async () => {
    let reads = 0;
    watchCpu(() => (reads++, undefined), 2000, () => expect.unreachable(), 1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(reads).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reads no more once stopped, and its timer keeps no process alive", async () => {
    let reads = 0;
    const timers: NodeJS.Timeout[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms: number) => {
      const t = real(fn, ms);
      timers.push(t);
      return t;
    }) as typeof setTimeout);
    const stop = watchCpu(() => (reads++, 0), 2000, () => expect.unreachable(), 1);
    spy.mockRestore();
    expect(timers).toHaveLength(1);
    expect(timers[0]!.hasRef()).toBe(false);
    stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(reads).toBe(1);
  });

  it("a stop from inside onOver's caller chain is harmless, and a second stop too", () => {
    const stop = watchCpu(() => 3000, 2000, () => undefined, 1);
    stop();
    stop();
  });
});

describe("nextCheckMs bounds", () => {
  it("is what is left over the CPUs, floored, within [20, 500]", () => {
    expect(nextCheckMs(999, 2)).toBe(499);
    expect(nextCheckMs(1001, 2)).toBe(500);
    expect(nextCheckMs(41, 2)).toBe(20);
    expect(nextCheckMs(42, 2)).toBe(21);
    expect(nextCheckMs(250, 1)).toBe(250);
    expect(nextCheckMs(250, -3)).toBe(250);
  });
});
