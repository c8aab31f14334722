import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { lastKernelReset } from "../src/store/kernel";
import { getExecution } from "../src/store/executions";
import type { Host } from "../src/runtime/host";
import { CPU_SPIN, forkBomb, MEMORY_BOMB } from "../../../test-support/limits.ts";
import { resultOf, startTestHost, tempDir } from "./helpers";
import { bwrapAvailable, klbr } from "./sandbox-support";

// C17 at the host: one host with limits (cgroup v1 on this machine, as root in CI), the rlimit
// mechanism forced, the sandbox's /tmp, the CLI's refusals, and a restart.

const MiB = 1024 * 1024;

/** The v1 memory cgroup a process is in (`/proc/<pid>/cgroup`). */
function memoryGroup(pid: number): string {
  return /^\d+:memory:(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, "utf8"))?.[1] ?? "";
}

describe("a host with memory=96MiB,cpu=30s,procs=48,file=1MiB", () => {
  let host: Host;
  let close: () => Promise<void>;
  let workspace: string;
  const LIMITS = "memory=96MiB,cpu=30s,procs=48,file=1MiB";

  beforeAll(async () => {
    ({ host, close, workspace } = await startTestHost({ limits: [LIMITS] }));
  });
  afterAll(async () => {
    await close();
  });

  test("status and runtime.inspect say which limits apply and by what mechanism", async () => {
    const status = (await host.status()) as { limits: { limits: string; mechanism: string } };
    expect(status.limits).toMatchObject({ limits: LIMITS, mechanism: "cgroup v1" });
    const inspect = await host.execute("i = await runtime.inspect()\n(i['limits']['mechanism'], i['usage']['cpu_ms'] > 0, i['usage']['peak_rss_bytes'] is None or i['usage']['peak_rss_bytes'] > 0)");
    expect(resultOf(inspect)).toBe("('cgroup v1', True, True)");
  });

  test("every execution row records cpu_ms and peak_rss_bytes; the model's result does not show them", async () => {
    const report = await host.execute("x = bytearray(40 << 20)\nlen(x)");
    const row = getExecution(host.db, report.id)!;
    expect(row.cpuMs).toEqual(expect.any(Number));
    expect(row.peakRssBytes).toBeGreaterThan(40 * MiB);
    expect(JSON.stringify(report)).not.toMatch(/cpu_ms|peak_rss/);
  });

  test("a memory bomb ends memory_limit while another session's cell keeps running; the next generation's reset says why", async () => {
    const gate = join(workspace, "gate");
    // The other session's cell runs across the bomb: it finishes only when the test opens the gate.
    const other = host.execute(`import os, time\nwhile not os.path.exists(${JSON.stringify(gate)}): time.sleep(0.01)\n'other done'`, "other");
    const hostRss = process.memoryUsage().rss;
    const bomb = await host.execute(MEMORY_BOMB);
    expect(bomb.status).toBe("failed");
    expect(bomb.error).toMatch(/^memory_limit: .*96MiB.*the namespace is gone/);
    expect(bomb.failure).toMatchObject({ reason: "memory_limit" });
    const row = getExecution(host.db, bomb.id)!;
    expect(row.peakRssBytes).toBeLessThanOrEqual(96 * MiB);
    // The host's own memory did not follow the bomb (it was bounded far from the host).
    expect(process.memoryUsage().rss - hostRss).toBeLessThan(64 * MiB);
    writeFileSync(gate, "");
    expect(resultOf(await other)).toBe("'other done'");
    expect(resultOf(await host.execute("1+1", "other"))).toBe("2");
    // The root session's namespace is gone; the new generation was started because of the limit.
    expect(lastKernelReset(host.db, "root")).toMatchObject({ reason: "memory_limit" });
    expect(resultOf(await host.execute("'x' in globals()"))).toBe("False");
  });

  test("a fork bomb of 10,000 stops at procs; the cell survives the refusal and the namespace is kept", async () => {
    const report = await host.execute(`${forkBomb()}\nkept = 1\n(n < 48, refused)`);
    expect(report.status).toBe("ok");
    expect(resultOf(report)).toBe("(True, 11)");
    expect(resultOf(await host.execute("kept"))).toBe("1");
  });

  test("a 2 GiB file write stops at file: EFBIG in the cell, an ordinary error, namespace kept", async () => {
    const report = await host.execute(`y = 5\nwith open(${JSON.stringify(join(workspace, "big"))}, 'wb') as f:\n    for i in range(2048):\n        f.write(b'x' * (1 << 20))`);
    expect(report.status).toBe("error");
    expect(report.error).toMatch(/File too large/);
    expect(resultOf(await host.execute("y"))).toBe("5");
  });

  test("a workspace.run command over the memory limit is killed in a group of its own, and its reply says so", async () => {
    const bomb = `import sys\\nb = []\\nwhile True: b.append(bytearray(1 << 20))`;
    const report = await host.execute(`import sys\no = await runtime.run([sys.executable, '-c', "${bomb}"])\n(o['signal'], o.get('limit'), 'memory' in o.get('limit_detail', ''))`);
    expect(resultOf(report)).toBe("('SIGKILL', 'memory_limit', True)");
    // The caller's namespace is untouched: the command was not in its tree.
    expect(resultOf(await host.execute("1+1"))).toBe("2");
  });

  test("limits survive a host restart: they are options, applied again to the new workers", async () => {
    const dataDir = tempDir();
    const first = await startTestHost({ dataDir, limits: ["memory=80MiB"] });
    const pid = ((await first.host.status()) as { workbenches: Array<{ pid: number }> }).workbenches[0]!.pid;
    expect(memoryGroup(pid)).toMatch(/\/klbr-\d+\//);
    await first.host.stop();
    const second = await startTestHost({ dataDir, workspace: first.workspace, limits: ["memory=80MiB"] });
    try {
      const status = (await second.host.status()) as { limits: { limits: string }; workbenches: Array<{ pid: number }> };
      expect(status.limits.limits).toBe("memory=80MiB");
      const group = memoryGroup(status.workbenches[0]!.pid);
      expect(group).toMatch(/\/klbr-\d+\//);
      const limit = readFileSync(`/sys/fs/cgroup/memory${group}/memory.limit_in_bytes`, "utf8").trim();
      expect(Number(limit)).toBe(80 * MiB);
    } finally {
      await second.close();
    }
  });
});

describe("the rlimit mechanism, forced", () => {
  test("a CPU spin ends cpu_limit (RLIMIT_CPU per process), said by status; the next reset says why", async () => {
    const { host, close } = await startTestHost({ limits: ["cpu=1s"], limitsMechanism: "rlimit" });
    try {
      expect(((await host.status()) as { limits: { mechanism: string; detail: string } }).limits).toMatchObject({ mechanism: "rlimit", detail: expect.stringMatching(/each process's CPU time/) });
      const spin = await host.execute(CPU_SPIN);
      expect(spin.status).toBe("failed");
      expect(spin.failure).toMatchObject({ reason: "cpu_limit" });
      expect(lastKernelReset(host.db, "root")).toMatchObject({ reason: "cpu_limit" });
    } finally {
      await close();
    }
  }, 120_000);
});

describe("klbr exec", () => {
  test("a cell ended by a limit is printed with the limit and exits 70 (KLBR_LIMITS, an embedded host)", async () => {
    const dataDir = tempDir();
    const workspace = tempDir("klbr-w-");
    const result = await klbr(["exec", "-d", dataDir, "-w", workspace, MEMORY_BOMB], { ...process.env, KLBR_LIMITS: "memory=64MiB" });
    expect(result.code).toBe(70);
    expect(result.stderr).toMatch(/memory_limit: the tree reached the memory limit \(64MiB\).*the namespace is gone/);
  }, 60_000); // a CLI process from source (tsx) plus an embedded host: slow on a loaded machine
});

describe("limits that cannot be applied refuse the start", () => {
  test("tmp without a sandbox: LIMITS_UNAVAILABLE, no worker started", async () => {
    await expect(startTestHost({ limits: ["tmp=8MiB"] })).rejects.toMatchObject({ code: "LIMITS_UNAVAILABLE" });
  });

  test("klbr serve --limit memory=lots exits 64 naming the bad part", async () => {
    const dataDir = tempDir();
    const result = await klbr(["serve", "-d", dataDir, "--limit", "cpu=2s,memory=lots"]);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/LIMITS_INVALID: --limit "memory=lots": "lots" is not a size/);
    expect(existsSync(join(dataDir, "klbr.sock"))).toBe(false);
  });
});

describe("tmp: the sandbox's /tmp under bwrap", () => {
  test("filling /tmp stops at tmp (ENOSPC in the cell, an ordinary error)", async () => {
    if (!bwrapAvailable()) throw new Error("bwrap cannot start a sandbox here");
    const { host, close } = await startTestHost({ sandbox: "bwrap", limits: ["tmp=8MiB"] });
    try {
      expect(((await host.status()) as { limits: { limits: string; mechanism: string } }).limits).toMatchObject({ limits: "tmp=8MiB", mechanism: "bwrap" });
      const report = await host.execute("import errno\ntry:\n    with open('/tmp/fill', 'wb') as f:\n        for i in range(64):\n            f.write(b'x' * (1 << 20)); f.flush()\n    r = 'no limit'\nexcept OSError as e:\n    r = errno.errorcode[e.errno]\nimport os\n(r, os.path.getsize('/tmp/fill') <= 8 << 20)");
      expect(resultOf(report)).toBe("('ENOSPC', True)");
    } finally {
      await close();
    }
  });
});
