import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CPU_SPIN, forkBomb, MEMORY_BOMB } from "../../../test-support/limits.ts";
import { guardArgv, readGuardStatus, resolvePython, type GuardStatus } from "../src/index.js";
import {
  cpuVerdict,
  GroupMeter,
  limitVerdict,
  LimitsUnavailableError,
  markGroup,
  parseLimits,
  prepareLimits,
  ProcMeter,
  watchCpu,
  withGuardLimits,
  type CellUsage,
  type LimitsMechanism,
  type LimitVerdict,
} from "../src/limits/index.js";
import type { Readable } from "node:stream";

// CPU tests spend 1 s of CPU time: on a loaded machine that may take many seconds of wall time,
// hence their long timeouts (they synchronise on the process's end, never on a sleep).
// The real mechanisms on this machine (CI runs as root): cgroup v2 where the unified tree offers
// what the limits need, cgroup v1 hierarchies otherwise, and the guard's rlimits when forced.

const MiB = 1024 * 1024;
const python = resolvePython();
const scratch = mkdtempSync(join(tmpdir(), "klbr-limits-"));
const mechanisms: LimitsMechanism[] = [];

afterAll(async () => {
  for (const m of mechanisms) await m.close();
  rmSync(scratch, { recursive: true, force: true });
});

function mechanism(text: string, kind?: "cgroup2" | "cgroup1" | "rlimit"): LimitsMechanism {
  const m = prepareLimits(parseLimits(text), kind ? { mechanism: kind } : {})!;
  mechanisms.push(m);
  return m;
}

interface Run {
  status: GuardStatus;
  exit: { code: number | null; signal: string | null };
  verdict: LimitVerdict | undefined;
  usage: CellUsage | undefined;
  stdout: string;
  stderr: string;
}

/** Run `argv` under the guard with the mechanism's limits, as the supervisor does for a worker. */
async function runUnder(m: LimitsMechanism, argv: string[]): Promise<Run> {
  const group = m.createGroup("test");
  const mark = group ? markGroup(group, m.limits) : undefined;
  const meter = group ? new GroupMeter(group) : undefined;
  meter?.begin();
  const [file, ...args] = withGuardLimits(guardArgv(argv, python), m.guardLimits(group));
  const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const status = readGuardStatus(child.stdio[3] as Readable);
  let over: LimitVerdict | undefined;
  const stopWatch =
    group && m.limits.cpuMs !== undefined
      ? watchCpu(() => group.cpuMs(), m.limits.cpuMs, (used) => {
          over = cpuVerdict(m.limits, used, m.kind);
          void group.kill();
        })
      : () => undefined;
  const exit = await new Promise<Run["exit"]>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  stopWatch();
  const verdict = over ?? limitVerdict(m.kind, m.limits, group, mark, exit);
  const usage = meter?.end();
  await group?.remove();
  return { status: await status, exit, verdict, usage, stdout, stderr };
}

const py = (code: string) => [python, "-c", code];

const BIG_WRITE = (path: string) =>
  [
    "import errno",
    `f = open(${JSON.stringify(path)}, 'wb')`,
    "chunk = b'x' * (1 << 20)",
    "try:",
    "    for i in range(2048):  # 2 GiB",
    "        f.write(chunk); f.flush()",
    "    print('wrote it all')",
    "except OSError as e:",
    "    print(errno.errorcode[e.errno], flush=True)",
  ].join("\n");

describe("cgroup v1 on this machine: memory, procs and cpu of the command's tree", () => {
  it("a memory bomb is ended by the kernel's OOM killer at the limit, read from memory.oom_control", async () => {
    const m = mechanism("memory=64MiB", "cgroup1");
    const run = await runUnder(m, py(MEMORY_BOMB));
    expect(run.status).toMatchObject({ pid: expect.any(Number) });
    expect(run.exit).toEqual({ code: null, signal: "SIGKILL" });
    expect(run.verdict).toMatchObject({ reason: "memory_limit" });
    expect(run.verdict!.detail).toMatch(/64MiB/);
    // The tree never held more than the limit: the machine's memory was not at stake.
    expect(run.usage!.peakRssBytes).toBeGreaterThan(32 * MiB);
    expect(run.usage!.peakRssBytes).toBeLessThanOrEqual(64 * MiB);
  });

  it("a fork bomb of 10,000 stops at procs; a bomb that survives the refusal is no limit end", async () => {
    const m = mechanism("procs=32", "cgroup1");
    const survived = await runUnder(m, py(forkBomb("print(n, e.errno, flush=True); break")));
    const [forked, errno] = survived.stdout.trim().split(" ");
    expect(Number(forked)).toBeLessThan(32);
    expect(Number(forked)).toBeGreaterThan(10);
    expect(errno).toBe("11"); // EAGAIN
    expect(survived.exit).toEqual({ code: 0, signal: null });
    expect(survived.verdict).toBeUndefined();
    const died = await runUnder(m, py(forkBomb("print(n, e.errno, flush=True); raise SystemExit(3)")));
    expect(died.exit.code).toBe(3);
    expect(died.verdict).toMatchObject({ reason: "procs_limit" });
  });

  it("a CPU spin is ended at the cpu limit by the host's watch over cpuacct.usage", async () => {
    const m = mechanism("cpu=1s", "cgroup1");
    const run = await runUnder(m, py(CPU_SPIN));
    expect(run.verdict).toMatchObject({ reason: "cpu_limit" });
    expect(run.exit.signal).toBe("SIGKILL");
    expect(run.usage!.cpuMs).toBeGreaterThanOrEqual(1000);
  }, 120_000);
});

describe("cgroup v2 on this machine's unified tree (cpu.stat and cgroup.kill need no controller)", () => {
  it("auto picks v2 for a cpu limit, v1 for memory (the unified tree here offers no memory controller)", () => {
    expect(mechanism("cpu=1s").kind).toBe("cgroup2");
    expect(mechanism("memory=64MiB").kind).toBe("cgroup1");
    expect(mechanism("memory=64MiB").skipped[0]).toMatch(/cgroup v2: .*memory controller/);
  });

  it("a CPU spin is ended at the cpu limit from cpu.stat usage_usec", async () => {
    const run = await runUnder(mechanism("cpu=1s", "cgroup2"), py(CPU_SPIN));
    expect(run.verdict).toMatchObject({ reason: "cpu_limit" });
    expect(run.verdict!.detail).toMatch(/cgroup2/);
    expect(run.exit.signal).toBe("SIGKILL");
    expect(run.usage!.cpuMs).toBeGreaterThanOrEqual(1000);
  }, 120_000);
});

describe("file: RLIMIT_FSIZE under every mechanism", () => {
  for (const kind of ["cgroup1", "rlimit"] as const) {
    it(`${kind}: a 2 GiB write stops at the limit with EFBIG in Python (an ordinary error), SIGXFSZ for other programs`, async () => {
      const m = mechanism("file=1MiB", kind);
      const target = join(scratch, `${kind}.bin`);
      const run = await runUnder(m, py(BIG_WRITE(target)));
      expect(run.stdout.trim()).toBe("EFBIG");
      expect(run.exit).toEqual({ code: 0, signal: null });
      expect(run.verdict).toBeUndefined();
      expect(statSync(target).size).toBe(MiB);
      const shell = await runUnder(m, ["/bin/sh", "-c", `head -c 2147483648 /dev/zero > ${join(scratch, `${kind}-sh.bin`)}`]);
      expect(shell.verdict).toMatchObject({ reason: "file_limit" });
    });
  }
});

describe("rlimit, forced (the mechanism where no cgroup can be made)", () => {
  it("memory bounds the address space: a 1 GiB allocation is a MemoryError the process survives", async () => {
    const m = mechanism("memory=256MiB", "rlimit");
    const run = await runUnder(m, py("try:\n    x = bytearray(1 << 30)\nexcept MemoryError:\n    print('MemoryError')"));
    expect(run.stdout.trim()).toBe("MemoryError");
    expect(run.exit.code).toBe(0);
  });

  it("a CPU spin dies of SIGXCPU at the limit: cpu_limit", async () => {
    const run = await runUnder(mechanism("cpu=1s", "rlimit"), py(CPU_SPIN));
    expect(run.exit.signal).toBe("SIGXCPU");
    expect(run.verdict).toMatchObject({ reason: "cpu_limit" });
  }, 120_000);

  it("procs cannot bind root: LIMITS_UNAVAILABLE rather than a run without it", () => {
    expect(() => prepareLimits(parseLimits("procs=64"), { mechanism: "rlimit", uid: 0 })).toThrow(LimitsUnavailableError);
    expect(() => prepareLimits(parseLimits("procs=64"), { mechanism: "rlimit", uid: 0 })).toThrow(/RLIMIT_NPROC does not bind uid 0/);
  });
});

describe("LIMITS_UNAVAILABLE", () => {
  it("names every mechanism's reason when none applies", () => {
    const fake = join(scratch, "fake-v2");
    mkdirSync(fake);
    writeFileSync(join(fake, "cgroup.controllers"), "cpu io\n");
    let err: unknown;
    try {
      prepareLimits(parseLimits("memory=64MiB,procs=64"), { places: { v2: fake, v1: {} }, uid: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LimitsUnavailableError);
    expect((err as LimitsUnavailableError).code).toBe("LIMITS_UNAVAILABLE");
    expect((err as Error).message).toMatch(/cgroup v2: .*does not offer the memory, pids controllers/);
    expect((err as Error).message).toMatch(/cgroup v1: no v1 memory, pids hierarchy is mounted/);
    expect((err as Error).message).toMatch(/rlimit: RLIMIT_NPROC does not bind uid 0/);
  });

  it("a group the command cannot join fails its start with the guard's `limits:` error, nothing runs", async () => {
    const m = mechanism("file=1MiB", "rlimit");
    const [file, ...args] = withGuardLimits(guardArgv(py("print('ran')"), python), { join: [join(scratch, "no-such-group", "cgroup.procs")], rlimits: {} });
    void m;
    const child = spawn(file!, args, { stdio: ["ignore", "pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    const status = await readGuardStatus(child.stdio[3] as Readable);
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(status).toMatchObject({ reported: true, error: expect.stringMatching(/limits: cannot join .*no-such-group/) });
    expect(code).toBe(127);
    expect(out).toBe("");
  });
});

describe("accounting without a cgroup: the process's own counters", () => {
  it("ProcMeter reads a cell's CPU time and its peak resident set, reset between cells", async () => {
    const child = spawn(python, ["-c", "import sys\nfor line in sys.stdin:\n    exec(line.replace('\\\\n', '\\n'))\n    print('done', flush=True)"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const done = () => new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
    const meter = new ProcMeter(() => child.pid);
    try {
      meter.begin();
      child.stdin!.write("x = bytearray(96 << 20)\\nimport time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass\\ndel x\n");
      await done();
      const first = meter.end();
      expect(first.cpuMs).toBeGreaterThanOrEqual(250);
      expect(first.peakRssBytes).toBeGreaterThan(96 * MiB);
      meter.begin();
      child.stdin!.write("y = 1\n");
      await done();
      const second = meter.end();
      expect(second.cpuMs).toBeLessThan(200);
      // clear_refs reset the peak: the second cell's is far below the first's.
      expect(second.peakRssBytes).toBeLessThan(64 * MiB);
      expect(meter.totals().peakRssBytes).toBeGreaterThan(96 * MiB);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("a host killed with -9 leaves its parent groups: the next host removes them", () => {
  it("klbr-<dead pid> groups (and what is left in them) are removed, a live host's are kept", async () => {
    const base = "/sys/fs/cgroup/pids";
    const dead = 4_000_000 + Math.floor(Math.random() * 100_000); // above pid_max: never alive
    mkdirSync(`${base}/klbr-${dead}/w-1`, { recursive: true });
    const live = mechanism("procs=64", "cgroup1");
    const group = live.createGroup("kept")!;
    expect(group.joinFiles.some((f) => f.startsWith(`${base}/klbr-${process.pid}/`))).toBe(true);
    // A second mechanism on the same machine sweeps: the dead host's groups go, this host's stay.
    mechanism("procs=64", "cgroup1");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(`${base}/klbr-${dead}`)).toBe(false);
    expect(existsSync(`${base}/klbr-${process.pid}`)).toBe(true);
    await group.remove();
  });
});
