import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type Database from "better-sqlite3";
import type { Host } from "../src/runtime/host";
import { lastKernelReset } from "../src/store/kernel";
import { readLog } from "../src/store/log-view";
import { resultOf, startTestHost } from "./helpers";

// Issue 38, item 2 (C17 amended): a limit that ends the worker between cells, from a thread the
// last cell left running. No cell's record can name it, so an incident does, and the next
// generation's kernel.reset reason is that limit (never worker_died).

type Status = { workbenches: Array<{ session_id: string; state: string; generation: string | null }> };

/** Resolves once the root workbench's worker of `generation` is dead (bounded). */
async function deadWithin(host: Host, generation: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const bench = ((await host.status()) as Status).workbenches.find((w) => w.session_id === "root");
    if (bench?.generation !== generation || bench.state === "dead") return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sqliteOf = (host: Host) => (host as unknown as { sqlite: Database.Database }).sqlite;

/** The cell leaves `body` running in a daemon thread after a second, and ends ok at once. */
const inBackground = (body: string) =>
  `import threading, time\ndef _later():\n    time.sleep(1)\n${body.replace(/^/gm, "    ")}\nthreading.Thread(target=_later, daemon=True).start()\nkept = 'before'\n'left running'`;

async function diesBetweenCells(host: Host, body: string, limit: string): Promise<void> {
  const first = await host.execute(inBackground(body));
  expect(first.status).toBe("ok");
  expect(resultOf(first)).toBe("'left running'");
  expect(await deadWithin(host, first.generation, 30_000)).toBe(true);
  // The next cell, sent as soon as the worker is dead, runs in a new generation whose reset says
  // why the namespace is gone.
  const next = await host.execute("'kept' in globals()");
  // The incident names the limit and the generation it ended; klbr log (readLog) shows it.
  const incidents = readLog(sqliteOf(host)).filter((e) => e.kind === "incident.workbench.limit");
  expect(incidents.at(-1)).toMatchObject({ detail: { session_id: "root", generation: first.generation, reason: limit, detail: expect.stringContaining(limit.replace("_limit", "")) } });
  expect(next.generation).not.toBe(first.generation);
  expect(resultOf(next)).toBe("False");
  expect(lastKernelReset(host.db, "root")).toMatchObject({ generation: next.generation, reason: limit });
  // The cell that left the thread running is not rewritten: it ended ok before the limit.
  expect(readLog(sqliteOf(host)).find((e) => e.kind === "execution" && (e as { id?: string }).id === first.id)).toMatchObject({ status: "ok" });
}

describe("a limit between cells under the cgroup (memory=128MiB, cpu=2s)", () => {
  let host: Host;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ host, close } = await startTestHost({ limits: ["memory=128MiB,cpu=2s"] }));
  });
  afterAll(async () => {
    await close();
  });

  test("a thread that allocates 300 MiB after its cell ended: incident memory_limit, reset memory_limit", async () => {
    await diesBetweenCells(host, "b = [bytearray(1 << 20) for _ in range(300)]", "memory_limit");
  }, 60_000);

  test("a thread that spins after its cell ended: incident cpu_limit, reset cpu_limit", async () => {
    await diesBetweenCells(host, "while True:\n    pass", "cpu_limit");
  }, 60_000);
});

describe("a limit between cells under the rlimit mechanism, forced (cpu=2s)", () => {
  test("a thread that spins after its cell ended dies of SIGXCPU: incident cpu_limit, reset cpu_limit", async () => {
    const { host, close } = await startTestHost({ limits: ["cpu=2s"], limitsMechanism: "rlimit" });
    try {
      await diesBetweenCells(host, "while True:\n    pass", "cpu_limit");
    } finally {
      await close();
    }
  }, 60_000);
});
