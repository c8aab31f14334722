import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Worker } from "@klbr/supervisor";
import { IdleCuller, workbenchPool } from "./culling";
import { Workbench } from "./workbench";

// The culling rule alone (C19), over workbenches with stand-in workers.
function bench(sessionId: string, state: Worker["state"] = "ready"): { bench: Workbench; shutdowns: () => number } {
  const b = new Workbench(sessionId);
  let count = 0;
  const worker = {
    state,
    generation: "g-1",
    shutdown: async () => {
      count += 1;
      worker.state = "dead";
      return { code: 0, signal: null, reason: "shutdown", tails: { stdout: "", stderr: "" } };
    },
  };
  b.worker = worker as unknown as Worker;
  return { bench: b, shutdowns: () => count };
}

function culler(benches: Workbench[], turns: Set<string> = new Set()) {
  const culled: string[] = [];
  const c = new IdleCuller({ idleTimeoutMs: 1000, all: () => benches, turnRunning: (s) => turns.has(s), onCulled: (b) => culled.push(b.sessionId) });
  return { c, culled };
}

describe("IdleCuller", () => {
  it("culls at the timeout, not one ms before, and marks why", async () => {
    const a = bench("a");
    const { c, culled } = culler([a.bench]);
    // A whole number: (t + 1000) - t is exactly 1000 only without a fraction to round.
    const t = (a.bench.lastActiveMs = 5_000);
    await c.sweep(t + 999);
    expect(culled).toEqual([]);
    await c.sweep(t + 1000);
    expect(culled).toEqual(["a"]);
    expect(a.shutdowns()).toBe(1);
    expect(a.bench.endedFor).toBe("idle_culled");
    expect(c.culled).toBe(1);
    // A dead worker is not culled again.
    await c.sweep(t + 1e9);
    expect(a.shutdowns()).toBe(1);
  });

  it("counts a cull only once its worker is gone (status never counts one it lists as stopping)", async () => {
    const a = bench("a");
    let finish!: () => void;
    const stopping = new Promise<void>((r) => (finish = r));
    let shuttingDown!: () => void;
    const shutdownCalled = new Promise<void>((r) => (shuttingDown = r));
    const worker = a.bench.worker as unknown as { state: string; shutdown: () => Promise<unknown> };
    const { shutdown } = worker;
    worker.shutdown = async () => {
      worker.state = "stopping";
      shuttingDown();
      await stopping;
      return shutdown();
    };
    const { c, culled } = culler([a.bench]);
    // A whole number: (t + 1000) - t is exactly the timeout only without a fraction to round.
    const t = (a.bench.lastActiveMs = 5_000);
    const sweep = c.sweep(t + 1000);
    await shutdownCalled; // no sleep: the cull is inside the worker's shutdown now
    expect(worker.state).toBe("stopping");
    expect(c.culled).toBe(0);
    expect(culled).toEqual([]);
    finish();
    await sweep;
    expect(c.culled).toBe(1);
    expect(culled).toEqual(["a"]);
  });

  it("never culls a session with a turn in progress, a queued cell, or a busy worker", async () => {
    const turn = bench("turn");
    const queued = bench("queued");
    const busy = bench("busy", "busy");
    const { c, culled } = culler([turn.bench, queued.bench, busy.bench], new Set(["turn"]));
    const release = await queued.bench.acquire();
    await c.sweep(performance.now() + 1e9);
    expect(culled).toEqual([]);
    release();
    await c.sweep(performance.now() + 1e9);
    expect(culled).toEqual(["queued"]);
  });

  it("counts idleness from the last time the slot was given back", async () => {
    const a = bench("a");
    const { c, culled } = culler([a.bench]);
    const release = await a.bench.acquire();
    const busyUntil = Math.floor(performance.now()) + 5000; // whole: exact sums below
    release();
    a.bench.lastActiveMs = busyUntil; // as if the cell ended 5 s later
    await c.sweep(busyUntil + 999);
    expect(culled).toEqual([]);
    await c.sweep(busyUntil + 1000);
    expect(culled).toEqual(["a"]);
  });
});

// The sweep's timing (C19), on vitest's fake clock (timers and performance.now together): a cull
// comes at the timeout and at most one sweep interval (an eighth of the timeout, within
// [10 ms, 5 s]) after it, whatever the timeout. Bounds, never a sleep that passes either way.
describe("IdleCuller sweeps", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** Start a culler over one bench idle from now; the fake ms at which it was culled, or null. */
  function timed(idleTimeoutMs: number) {
    // Far from 0 on the fake clock: an idle time computed as now + lastActive would show.
    vi.advanceTimersByTime(123_456);
    const a = bench("a");
    a.bench.lastActiveMs = performance.now();
    let sweeps = 0;
    let culledAt: number | null = null;
    let idle: number | null = null;
    const t0 = performance.now();
    const c = new IdleCuller({
      idleTimeoutMs,
      all: () => (sweeps++, [a.bench]),
      turnRunning: () => false,
      onCulled: (_b, idleMs) => ((culledAt = performance.now() - t0), (idle = idleMs)),
    });
    c.start();
    return { c, a, sweeps: () => sweeps, culledAt: () => culledAt, idleMs: () => idle };
  }

  for (const timeout of [1000, 80, 16, 40_000, 3_600_000]) {
    const every = Math.max(10, Math.min(5000, Math.floor(timeout / 8)));
    it(`culls a ${timeout} ms idle workbench within the timeout and one sweep (${every} ms), never before`, async () => {
      const t = timed(timeout);
      await vi.advanceTimersByTimeAsync(timeout - 1);
      expect(t.culledAt()).toBeNull();
      await vi.advanceTimersByTimeAsync(every + 1);
      expect(t.culledAt()).not.toBeNull();
      expect(t.culledAt()!).toBeGreaterThanOrEqual(timeout);
      expect(t.culledAt()!).toBeLessThanOrEqual(timeout + every);
      // The idle time it reports is the time since the slot was last given back.
      expect(t.idleMs()!).toBeGreaterThanOrEqual(timeout);
      expect(t.idleMs()!).toBeLessThanOrEqual(timeout + every);
      expect(t.a.bench.endedFor).toBe("idle_culled");
      t.c.stop();
    });
  }

  it("sweeps every eighth of the timeout, not more often (one timer for every workbench)", async () => {
    const t = timed(8000);
    await vi.advanceTimersByTimeAsync(999);
    expect(t.sweeps()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.sweeps()).toBe(1);
    await vi.advanceTimersByTimeAsync(4000);
    expect(t.sweeps()).toBe(5);
    t.c.stop();
  });

  it("sweeps at most every 10 ms however short the timeout", async () => {
    const t = timed(16);
    await vi.advanceTimersByTimeAsync(9);
    expect(t.sweeps()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.sweeps()).toBe(1);
    await vi.advanceTimersByTimeAsync(90);
    expect(t.sweeps()).toBe(10);
    t.c.stop();
  });

  it("sweeps no more once stopped, and its timer keeps no process alive", async () => {
    const t = timed(80);
    const timer = (t.c as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);
    t.c.stop();
    expect((t.c as unknown as { timer: NodeJS.Timeout | null }).timer).toBeNull();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.sweeps()).toBe(0);
    expect(t.culledAt()).toBeNull();
    t.c.stop(); // twice is harmless
  });
});

describe("IdleCuller.cull, checked again in the slot", () => {
  for (const change of ["busy", "gone", "turn"] as const) {
    it(`does not cull when the worker became ${change === "gone" ? "null" : change === "busy" ? "busy" : "a turn's"} between the sweep and the slot`, async () => {
      const a = bench("a");
      const turns = new Set<string>();
      const { c, culled } = culler([a.bench], turns);
      const sweep = c.sweep(performance.now() + 1e9);
      // The sweep chose it and waits for its slot (acquire resolves a microtask later).
      if (change === "busy") (a.bench.worker as { state: string }).state = "busy";
      if (change === "gone") a.bench.worker = null;
      if (change === "turn") turns.add("a");
      await sweep;
      expect(culled).toEqual([]);
      expect(a.shutdowns()).toBe(0);
      expect(a.bench.endedFor).toBeNull();
      expect(c.culled).toBe(0);
    });
  }

  it("holds the slot while the worker shuts down: a cell that queues meanwhile starts after the cull", async () => {
    const a = bench("a");
    let finishShutdown!: () => void;
    const worker = a.bench.worker as unknown as { shutdown: () => Promise<unknown>; state: string };
    worker.shutdown = () => new Promise((resolve) => (finishShutdown = () => ((worker.state = "dead"), resolve(undefined))));
    const { c, culled } = culler([a.bench]);
    const sweep = c.sweep(performance.now() + 1e9);
    await new Promise((r) => setImmediate(r));
    expect(a.bench.idle).toBe(false);
    let cellStarted = false;
    const cell = a.bench.acquire().then((release) => ((cellStarted = true), release));
    await new Promise((r) => setImmediate(r));
    expect(cellStarted).toBe(false);
    finishShutdown();
    await sweep;
    expect(culled).toEqual(["a"]);
    (await cell)();
    expect(cellStarted).toBe(true);
    expect(a.bench.idle).toBe(true);
  });

  it("culls every idle workbench in one sweep and only those", async () => {
    const benches = ["a", "b", "c"].map((s) => bench(s));
    const t = Math.floor(performance.now());
    benches[0]!.bench.lastActiveMs = t;
    benches[1]!.bench.lastActiveMs = t + 500;
    benches[2]!.bench.lastActiveMs = t - 5000;
    const { c, culled } = culler(benches.map((b) => b.bench));
    await c.sweep(t + 1000);
    expect(culled.sort()).toEqual(["a", "c"]);
    expect(c.culled).toBe(2);
    expect(benches.map((b) => b.shutdowns())).toEqual([1, 0, 1]);
  });

  it("isIdle: a live ready worker, nothing queued, no turn, past the timeout", () => {
    const a = bench("a");
    const { c } = culler([a.bench]);
    const t = (a.bench.lastActiveMs = 10_000);
    expect(c.isIdle(a.bench, t + 1000)).toBe(true);
    expect(c.isIdle(a.bench, t + 999)).toBe(false);
    expect(c.quiet(a.bench)).toBe(true);
    a.bench.worker = null;
    expect(c.quiet(a.bench)).toBe(false);
    expect(c.isIdle(a.bench, t + 1e9)).toBe(false);
    const dead = bench("d", "dead");
    expect(c.quiet(dead.bench)).toBe(false);
  });
});

describe("workbenchPool (klbr status, C19)", () => {
  const spares = { target: 2, available: 1, pids: [42] };
  it("counts live workbenches (not dead, not without a worker), the idle ones among them, and the culls", async () => {
    const ready = bench("ready").bench;
    const busy = bench("busy", "busy").bench;
    const dead = bench("dead", "dead").bench;
    const none = new Workbench("none");
    const queued = bench("queued").bench;
    const release = await queued.acquire();
    const all = [ready, busy, dead, none, queued];
    const { c } = culler([]);
    c.culled = 3;
    expect(workbenchPool({ all: () => all, spares } as never, c, 5000)).toEqual({
      spare: { target: 2, ready: 1, pids: [42] },
      idle_timeout_ms: 5000,
      live: 3,
      idle: 1,
      culled: 3,
    });
    release();
    expect(workbenchPool({ all: () => all, spares } as never, null, undefined)).toEqual({
      spare: { target: 2, ready: 1, pids: [42] },
      idle_timeout_ms: null,
      live: 3,
      idle: 2,
      culled: 0,
    });
  });
});
