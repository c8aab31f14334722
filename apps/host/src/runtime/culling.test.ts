import { describe, expect, it } from "vitest";
import type { Worker } from "@klbr/supervisor";
import { IdleCuller } from "./culling";
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
