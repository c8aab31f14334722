import { afterAll, describe, expect, it } from "vitest";
import { parseLimits, prepareLimits, type LimitsMechanism } from "../src/index.js";
import { CPU_SPIN, forkBomb, MEMORY_BOMB } from "../../../test-support/limits.ts";
import { startPython } from "./helpers.js";

// startWorker with `limits`: the generation's group (or rlimits) applies to the real Python worker,
// a limit that ends it is the cell's recorded reason, and every cell carries what it cost.

const MiB = 1024 * 1024;
const mechanisms: LimitsMechanism[] = [];
afterAll(async () => {
  for (const m of mechanisms) await m.close();
});

function limits(text: string, mechanism?: "cgroup1" | "cgroup2" | "rlimit"): LimitsMechanism {
  const m = prepareLimits(parseLimits(text), mechanism ? { mechanism } : {})!;
  mechanisms.push(m);
  return m;
}

describe("a workbench under limits (cgroup v1 here)", () => {
  it("a memory bomb fails the cell with memory_limit, namespace gone; the cells before it carry their cost", async () => {
    const worker = await startPython({ limits: limits("memory=96MiB,file=1MiB") });
    try {
      const small = await worker.execute("x = bytearray(32 << 20)\nlen(x)");
      expect(small).toMatchObject({ kind: "cell", status: "ok" });
      expect(small.usage!.peakRssBytes).toBeGreaterThan(32 * MiB);
      expect(small.usage!.cpuMs).toEqual(expect.any(Number));
      // The file limit: an ordinary error the namespace survives.
      const big = await worker.execute("f = open('/tmp/klbr-limits-efbig', 'wb')\ntry:\n    f.write(b'x' * (2 << 20))\nfinally:\n    f.close()");
      expect(big).toMatchObject({ kind: "cell", status: "error" });
      expect((big as { error: string }).error).toMatch(/File too large/);
      expect(await worker.execute("len(x)")).toMatchObject({ status: "ok", output: [{ stream: "result", text: String(32 * MiB) }] });
      const bomb = await worker.execute(MEMORY_BOMB);
      expect(bomb).toMatchObject({ kind: "failed", source: "host", reason: "memory_limit" });
      expect((bomb as { error: string }).error).toMatch(/^memory_limit: .*96MiB.*the namespace is gone/);
      expect(bomb.usage!.peakRssBytes).toBeLessThanOrEqual(96 * MiB);
      expect((await worker.exited).reason).toBe("memory_limit");
      expect(worker.usage().peakRssBytes).toBeGreaterThan(32 * MiB);
    } finally {
      await worker.hardStop("test_end").catch(() => undefined);
    }
  });

  it("a fork bomb of 10,000 stops at procs and the cell goes on: an ordinary result", async () => {
    const worker = await startPython({ limits: limits("procs=24") });
    try {
      const done = await worker.execute(`${forkBomb()}\n(n < 24, refused)`);
      expect(done).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "result", text: "(True, 11)" }] });
      expect(await worker.execute("1+1")).toMatchObject({ status: "ok", output: [{ text: "2" }] });
    } finally {
      await worker.shutdown();
    }
  });

  it("a CPU spin ends the generation at the cpu limit: cpu_limit", async () => {
    const worker = await startPython({ limits: limits("cpu=1s") });
    try {
      const spin = await worker.execute(CPU_SPIN);
      expect(spin).toMatchObject({ kind: "failed", source: "host", reason: "cpu_limit" });
      // The limit is the generation's: its start-up counts too, so the cell itself used a bit less.
      const used = Number(/the tree used (\d+) ms/.exec((spin as { error: string }).error)![1]);
      expect(used).toBeGreaterThanOrEqual(1000);
      expect(spin.usage!.cpuMs).toBeGreaterThan(500);
      expect(spin.usage!.cpuMs).toBeLessThanOrEqual(used);
    } finally {
      await worker.hardStop("test_end").catch(() => undefined);
    }
  }, 120_000);
});

describe("a workbench under forced rlimits", () => {
  it("a MemoryError the cell survives is an ordinary result; the cost is read from /proc", async () => {
    const worker = await startPython({ limits: limits("memory=512MiB", "rlimit") });
    try {
      const done = await worker.execute("try:\n    x = bytearray(1 << 30)\nexcept MemoryError:\n    r = 'MemoryError'\nr");
      expect(done).toMatchObject({ kind: "cell", status: "ok", output: [{ text: "'MemoryError'" }] });
      expect(done.usage!.cpuMs).toEqual(expect.any(Number));
      expect(done.usage!.peakRssBytes).toBeGreaterThan(MiB);
    } finally {
      await worker.shutdown();
    }
  });

  it("a CPU spin dies of SIGXCPU: cpu_limit", async () => {
    const worker = await startPython({ limits: limits("cpu=1s", "rlimit") });
    const spin = await worker.execute(CPU_SPIN);
    expect(spin).toMatchObject({ kind: "failed", reason: "cpu_limit" });
    await worker.exited;
  }, 120_000);
});

describe("without limits", () => {
  it("cells still carry their cost, from the worker process's own counters", async () => {
    const worker = await startPython();
    try {
      const done = await worker.execute("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass");
      expect(done.usage!.cpuMs).toBeGreaterThanOrEqual(150);
      expect(done.usage!.peakRssBytes).toBeGreaterThan(MiB);
    } finally {
      await worker.shutdown();
    }
  });
});
