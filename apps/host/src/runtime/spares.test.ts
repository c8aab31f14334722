import type { SkillIndex } from "@klbr/skills";
import type { SpareOptions, SpareWorker } from "@klbr/supervisor";
import { describe, expect, it } from "vitest";
import { SparePool } from "./spares";
import { StartGate } from "./start-gate";
import { Workbench } from "./workbench";

// The spare pool's refill timing alone (no process is started: the gate hands out fake spares).
// A replacement spare's start (a Python interpreter importing the runtime) must not compete for
// the CPU with the bind and the first cell the taken spare was kept warm for.

const INDEX = { revision: "r1", skills: [], refused: [] } as unknown as SkillIndex;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => (resolve = res));
  return { promise, resolve };
}

/** A pool of one spare whose starts are counted; each start "spawns" a fake spare at once. */
function countingPool(refillDelayMs: number) {
  const started: SpareWorker[] = [];
  const gate = new StartGate(2);
  const run = gate.run.bind(gate);
  gate.run = (<T>(_start: () => Promise<T>) =>
    run(async () => {
      const spare: SpareWorker = {
        pid: 1000 + started.length,
        available: true,
        exited: new Promise(() => undefined),
        bind: async () => Promise.reject(new Error("not used")),
        discard: async () => undefined,
      };
      started.push(spare);
      return spare as T;
    })) as StartGate["run"];
  const pool = new SparePool({
    count: 1,
    stopping: () => false,
    reindex: async () => INDEX,
    options: () => ({}) as SpareOptions,
    fingerprint: () => "f",
    gate,
    onError: (error) => {
      throw error;
    },
    refillDelayMs,
  });
  return { pool, started };
}

describe("SparePool refill", () => {
  it("starts the replacement of a taken spare only once the taker is quiet", async () => {
    const { pool, started } = countingPool(3_600_000);
    await pool.fill();
    expect(started).toHaveLength(1);
    const quiet = deferred();
    expect(pool.take(INDEX, quiet.promise)).toBe(started[0]);
    // Several turns of the event loop: a refill that started at the take would have reached the gate.
    for (let i = 0; i < 5; i++) await turn();
    expect(started).toHaveLength(1);
    expect(pool.available).toBe(0);
    quiet.resolve();
    for (let i = 0; i < 100 && pool.available === 0; i++) await turn();
    expect(started).toHaveLength(2);
    expect(pool.available).toBe(1);
    await pool.stop();
  });

  it("starts the replacement after the refill delay when the taker stays busy", async () => {
    const { pool, started } = countingPool(1);
    await pool.fill();
    expect(pool.take(INDEX, new Promise(() => undefined))).toBe(started[0]);
    for (let i = 0; i < 1000 && pool.available === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(started).toHaveLength(2);
    await pool.stop();
  });

  it("starts nothing after a stop, even when the taker goes quiet later", async () => {
    const { pool, started } = countingPool(3_600_000);
    await pool.fill();
    const quiet = deferred();
    pool.take(INDEX, quiet.promise);
    await pool.stop();
    quiet.resolve();
    for (let i = 0; i < 5; i++) await turn();
    expect(started).toHaveLength(1);
  });
});

describe("Workbench.whenIdle", () => {
  it("resolves when the slot is given back with nobody waiting, not at the hand-over to the next holder", async () => {
    const bench = new Workbench("s");
    let idle = false;
    void bench.whenIdle().then(() => (idle = true));
    // As Workbenches.ensure then Cells.execute: the start's release hands the slot to the first cell.
    const releaseStart = await bench.acquire();
    releaseStart();
    const releaseCell = await bench.acquire();
    for (let i = 0; i < 5; i++) await turn();
    expect(idle).toBe(false);
    releaseCell();
    for (let i = 0; i < 5 && !idle; i++) await turn();
    expect(idle).toBe(true);
  });
});
