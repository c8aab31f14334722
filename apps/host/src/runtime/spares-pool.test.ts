import type { SkillIndex } from "@klbr/skills";
import type { SpareOptions, SpareWorker } from "@klbr/supervisor";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REFILL_DELAY_MS, SparePool, type SparesDeps } from "./spares";
import { StartGate } from "./start-gate";

// The spare pool's bookkeeping alone (C19): which spares it starts, keeps, hands out and discards.
// startSpare is replaced by a stand-in that "spawns" at once: no process is started here (the
// real spares are in test/spares.test.ts); the pool's own start closure still runs as written.
const spawned: FakeSpare[] = [];
let spawnFails: Error | null = null;
vi.mock("@klbr/supervisor", async (original) => ({
  ...(await original<typeof import("@klbr/supervisor")>()),
  startSpare: async (options: SpareOptions) => {
    if (spawnFails) throw spawnFails;
    const spare = fakeSpare(options);
    spawned.push(spare);
    return spare;
  },
}));

interface FakeSpare extends SpareWorker {
  options: SpareOptions;
  discards: number;
  alive: boolean;
}

function fakeSpare(options: SpareOptions): FakeSpare {
  const spare: FakeSpare = {
    options,
    discards: 0,
    alive: true,
    pid: 1000 + spawned.length,
    get available() {
      return this.alive;
    },
    exited: new Promise(() => undefined),
    bind: async () => Promise.reject(new Error("not used")),
    discard: async () => {
      spare.discards += 1;
      spare.alive = false;
    },
  };
  return spare;
}

const index = (revision: string) => ({ revision, skills: [], refused: [] }) as unknown as SkillIndex;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const settle = async (n = 20) => {
  for (let i = 0; i < n; i++) await turn();
};

function pool(over: Partial<SparesDeps> & { revision?: () => string } = {}) {
  const errors: Error[] = [];
  let fingerprint = "f1";
  const revision = over.revision ?? (() => "r1");
  const deps: SparesDeps = {
    count: 1,
    stopping: () => false,
    reindex: async () => index(revision()),
    options: (i) => ({ marker: i.revision }) as unknown as SpareOptions,
    fingerprint: () => fingerprint,
    onError: (e) => void errors.push(e),
    refillDelayMs: 3_600_000,
    ...over,
  };
  const p = new SparePool(deps);
  return { p, errors, setFingerprint: (f: string) => (fingerprint = f) };
}

beforeEach(() => {
  spawned.length = 0;
  spawnFails = null;
});

describe("SparePool.fill", () => {
  it("starts spares one at a time up to the count, with the options of the index it made", async () => {
    let concurrent = 0;
    let peak = 0;
    const { p } = pool({
      count: 3,
      reindex: async () => {
        peak = Math.max(peak, ++concurrent);
        await turn();
        concurrent -= 1;
        return index("r1");
      },
    });
    await p.fill();
    expect(spawned).toHaveLength(3);
    expect(peak).toBe(1);
    expect(p.target).toBe(3);
    expect(p.available).toBe(3);
    expect(p.pids).toEqual([1000, 1001, 1002]);
    expect(spawned[0]!.options).toEqual({ marker: "r1" });
    // Full: another fill starts nothing.
    await p.fill();
    expect(spawned).toHaveLength(3);
    await p.stop();
  });

  it("shares one fill between concurrent callers", async () => {
    const { p } = pool({ count: 2 });
    const a = p.fill();
    const b = p.fill();
    expect(b).toBe(a);
    await a;
    expect(spawned).toHaveLength(2);
    // A later fill is a new one (the first cleared itself), and starts what is missing.
    spawned[0]!.alive = false;
    await p.fill();
    expect(spawned).toHaveLength(3);
    expect(p.available).toBe(2);
    expect(p.pids).toEqual([1001, 1002]);
    await p.stop();
  });

  it("starts nothing with a count of 0, while the host stops, or once stopped", async () => {
    const none = pool({ count: 0 });
    await none.p.fill();
    const stopping = pool({ stopping: () => true });
    await stopping.p.fill();
    const stopped = pool();
    await stopped.p.stop();
    await stopped.p.fill();
    expect(spawned).toHaveLength(0);
  });

  it("discards a spare whose start completed after the stop began", async () => {
    let stopping = false;
    const gate = new StartGate(1);
    const { p } = pool({ stopping: () => stopping, gate });
    const run = gate.run.bind(gate);
    gate.run = (<T>(start: () => Promise<T>) => run(async () => {
      const spare = await start();
      stopping = true; // the host began to stop while the spare spawned
      return spare;
    })) as StartGate["run"];
    await p.fill();
    expect(spawned).toHaveLength(1);
    expect(spawned[0]!.discards).toBe(1);
    expect(p.available).toBe(0);
  });

  it("spawns nothing when the stop came while the start waited for the gate", async () => {
    const gate = new StartGate(1);
    let letGo!: () => void;
    const busy = gate.run(() => new Promise<void>((r) => (letGo = r)));
    const { p, errors } = pool({ gate });
    const filling = p.fill();
    await settle(5);
    const stopping = p.stop();
    letGo();
    await busy;
    await filling;
    await stopping;
    expect(spawned).toHaveLength(0);
    expect(errors).toEqual([]);
  });

  it("queues its starts in the gate with the cold starts", async () => {
    const gate = new StartGate(1);
    let letGo!: () => void;
    const cold = gate.run(() => new Promise<void>((r) => (letGo = r)));
    const { p } = pool({ gate });
    const filling = p.fill();
    await settle(5);
    expect(spawned).toHaveLength(0);
    expect(gate.queued).toBe(1);
    letGo();
    await cold;
    await filling;
    expect(spawned).toHaveLength(1);
    await p.stop();
  });

  it("reports a failed start and stops trying until the next fill, which starts again", async () => {
    spawnFails = new Error("spawn failed");
    const { p, errors } = pool({ count: 2 });
    await p.fill();
    expect(errors.map((e) => e.message)).toEqual(["spawn failed"]);
    spawnFails = null;
    await p.fill();
    expect(spawned).toHaveLength(2);
    await p.stop();
  });

  it("reports a failed index", async () => {
    const { p, errors } = pool({ reindex: async () => Promise.reject(new Error("bad roots")) });
    await p.fill();
    expect(errors.map((e) => e.message)).toEqual(["bad roots"]);
    expect(spawned).toHaveLength(0);
  });
});

describe("SparePool.take", () => {
  it("hands out a current spare once, counting it taken", async () => {
    const { p } = pool();
    await p.fill();
    expect(p.take(index("r1"))).toBe(spawned[0]);
    expect(p.taken).toBe(1);
    expect(p.discarded).toBe(0);
    expect(p.take(index("r1"))).toBeNull();
    expect(p.taken).toBe(1);
    await p.stop();
  });

  it("discards, never hands out, a spare of another skill set, another fingerprint, or one that died", async () => {
    for (const stale of ["revision", "fingerprint", "dead"] as const) {
      spawned.length = 0;
      const { p, setFingerprint } = pool();
      await p.fill();
      if (stale === "fingerprint") setFingerprint("f2");
      if (stale === "dead") spawned[0]!.alive = false;
      expect(p.take(index(stale === "revision" ? "r2" : "r1"))).toBeNull();
      expect(p.taken).toBe(0);
      expect(p.discarded).toBe(1);
      expect(spawned[0]!.discards).toBe(1);
      await p.stop();
    }
  });

  it("skips stale spares to the first current one", async () => {
    let revision = "r1";
    const { p } = pool({ count: 3, revision: () => revision });
    await p.fill();
    p.take(index("r1")); // leaves 2 of r1; no refill (an hour's delay, no quiet)
    revision = "r2";
    await p.fill(); // a third, of r2
    expect(spawned).toHaveLength(4);
    expect(p.take(index("r2"))).toBe(spawned[3]);
    expect(p.discarded).toBe(2);
    expect([spawned[1]!.discards, spawned[2]!.discards]).toEqual([1, 1]);
    expect(p.taken).toBe(2);
    await p.stop();
  });

  it("takenUnused moves one from taken to discarded", async () => {
    const { p } = pool();
    await p.fill();
    p.take(index("r1"));
    p.takenUnused();
    expect([p.taken, p.discarded]).toEqual([0, 1]);
  });
});

describe("SparePool refill after a take", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it(`waits ${REFILL_DELAY_MS} ms by default for a taker that stays busy, not longer`, async () => {
    const { p } = pool({ refillDelayMs: undefined });
    await p.fill();
    p.take(index("r1"), new Promise(() => undefined));
    await vi.advanceTimersByTimeAsync(REFILL_DELAY_MS - 1);
    expect(spawned).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(spawned).toHaveLength(2);
    expect(p.available).toBe(1);
    await p.stop();
  });

  it("starts at once when the taker goes quiet (rejected counts too), and only once for both triggers", async () => {
    const { p } = pool({ refillDelayMs: 100 });
    await p.fill();
    let fail!: (e: Error) => void;
    p.take(index("r1"), new Promise((_r, rej) => (fail = rej)));
    await vi.advanceTimersByTimeAsync(10);
    expect(spawned).toHaveLength(1);
    fail(new Error("the first cell failed"));
    await vi.advanceTimersByTimeAsync(0);
    expect(spawned).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(spawned).toHaveLength(2);
    await p.stop();
  });

  it("waits once at a time: a second take during the wait adds no timer", async () => {
    const { p } = pool({ count: 2, refillDelayMs: 100 });
    await p.fill();
    p.take(index("r1"), new Promise(() => undefined));
    await vi.advanceTimersByTimeAsync(50);
    p.take(index("r1"), new Promise(() => undefined));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    // The one wait ended at 100 ms after the first take: the fill starts both.
    expect(spawned).toHaveLength(4);
    await p.stop();
  });

  it("a take with nothing to refill for (count 0) or after the stop sets no timer; the stop clears one", async () => {
    const none = pool({ count: 0 });
    none.p.take(index("r1"), new Promise(() => undefined));
    expect(vi.getTimerCount()).toBe(0);
    const { p } = pool({ refillDelayMs: 100 });
    await p.fill();
    p.take(index("r1"), new Promise(() => undefined));
    expect(vi.getTimerCount()).toBe(1);
    await p.stop();
    expect(vi.getTimerCount()).toBe(0);
    p.take(index("r1"), new Promise(() => undefined));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(spawned).toHaveLength(1);
  });

  it("the refill timer keeps no process alive", async () => {
    const { p } = pool({ refillDelayMs: 100 });
    await p.fill();
    p.take(index("r1"), new Promise(() => undefined));
    const timer = (p as unknown as { refill: NodeJS.Timeout }).refill;
    expect(timer.hasRef()).toBe(false);
    await p.stop();
  });
});

describe("SparePool.stop", () => {
  it("discards every ready spare and waits for a fill in progress", async () => {
    let release!: () => void;
    let calls = 0;
    const { p } = pool({
      count: 2,
      reindex: async () => {
        if (++calls === 2) await new Promise<void>((r) => (release = r));
        return index("r1");
      },
    });
    const filling = p.fill();
    await settle(5);
    expect(spawned).toHaveLength(1);
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    await settle(5);
    expect(stopped).toBe(false);
    release();
    await filling;
    await stopping;
    expect(spawned).toHaveLength(1);
    expect(spawned[0]!.discards).toBe(1);
    expect(p.available).toBe(0);
  });

  it("a failed fill does not fail the stop", async () => {
    const { p } = pool({ onError: (e) => { throw e; }, reindex: async () => Promise.reject(new Error("x")) });
    const filling = p.fill().catch(() => undefined);
    await expect(p.stop()).resolves.toBeUndefined();
    await filling;
  });
});
