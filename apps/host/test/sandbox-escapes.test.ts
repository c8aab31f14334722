// The sandbox battery, issue 19 items 1-3: what a cell (or an operator's passed variable) could do
// to the programs that run on the host before any namespace exists (the guard, bwrap), to the
// host's kernel settings, and to a data directory inside the workspace. Run as root in CI and as an
// unprivileged user (.ci/sandbox-unprivileged.sh).
import { readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { removeTree, tempDir } from "./helpers";
import { bwrapAvailable, klbr, probe, startDaemon, stopDaemon, type Daemon } from "./sandbox-support";

const HAS_BWRAP = bwrapAvailable();
const MODES = [
  { mode: "none" as const, args: [] as string[] },
  { mode: "bwrap" as const, args: ["--sandbox", "bwrap", "--network", "off"] },
];
/** What the guard and bwrap may carry: the host's minimal base and the tree tags. */
const LAUNCHER_NAMES = /^(PATH|HOME|LANG|LC_\w+|TZ|TMPDIR|KLBR_TREE|KLBR_HOST_TREE)$/;

function environ(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
}

function ppid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").filter(Boolean);
}

/** The programs the dynamic loader ran with LD_DEBUG=files writing to `prefix.<pid>` files: each file's main program. */
function loadedPrograms(dir: string, prefix: string): string[] {
  const programs = new Set<string>();
  for (const name of readdirSync(dir).filter((n) => n.startsWith(`${prefix}.`))) {
    for (const [, by] of readFileSync(join(dir, name), "latin1").matchAll(/needed by (\S+)/g)) {
      if (!/\.so(\.|$)/.test(by!)) programs.add(by!);
    }
  }
  return [...programs].sort();
}

describe.each(MODES)("environment handoff under sandbox $mode (issue 19, item 1)", ({ mode, args }) => {
  const sandboxed = mode === "bwrap";
  const passed = `passed-${process.pid}-${mode}`;
  let dataDir: string;
  let workspace: string;
  let daemon: Daemon | undefined;

  beforeAll(async () => {
    if (sandboxed && !HAS_BWRAP) return;
    dataDir = tempDir("klbr-ed-");
    workspace = tempDir("klbr-ew-");
    daemon = await startDaemon(dataDir, workspace, args, { ...process.env, KLBR_T_PASSED: passed, KLBR_PASS_ENV: "KLBR_T_PASSED" });
  }, 60_000);

  afterAll(async () => {
    if (daemon) {
      daemon.client.close();
      await stopDaemon(daemon.child);
    }
    for (const dir of [dataDir, workspace]) if (dir) removeTree(dir);
  });

  const it = test.skipIf(sandboxed && !HAS_BWRAP);

  it("a cell's workspace.run env reaches the command alone, never the guard or bwrap on the host", async () => {
    const prefix = `ld-${mode}`;
    // LD_DEBUG_OUTPUT: every program the loader starts with these variables writes <prefix>.<pid>,
    // naming itself: the same door LD_PRELOAD=ws/evil.so went through.
    const r = await probe(
      daemon!.client,
      `run = await runtime.run(['env'], env={'LD_DEBUG': 'files', 'LD_DEBUG_OUTPUT': ${JSON.stringify(join(workspace, prefix))}, 'KLBR_T_CELL': 'cell'})\nr['run'] = [run['exit_code'], run['stdout']]`,
    );
    const [code, stdout] = r.run as [number, string];
    expect(code).toBe(0);
    expect(stdout).toContain("KLBR_T_CELL=cell\n");
    expect(stdout).toContain("LD_DEBUG=files\n");
    expect(loadedPrograms(workspace, prefix)).toEqual(["env"]);
  });

  it("the worker's guard (and bwrap) start with the host's minimal environment: no passed name, no token", async () => {
    const status = (await daemon!.client.request({ op: "status" })) as { hooks: { pid: number }; workbenches: Array<{ pid: number }> };
    const seen = await probe(daemon!.client, "r['passed'] = os.environ.get('KLBR_T_PASSED')");
    expect(seen.passed).toBe(passed);
    for (const pid of [status.hooks.pid, ...status.workbenches.map((b) => b.pid)]) {
      const guard = ppid(pid);
      expect(cmdline(guard).some((a) => a.endsWith("klbr_guard.py"))).toBe(true);
      // none: pid is the worker itself; bwrap: pid is bwrap, the worker two levels below it.
      const onHost = sandboxed ? [guard, pid] : [guard];
      if (sandboxed) expect(cmdline(pid)[0]).toMatch(/bwrap$/);
      for (const p of onHost) {
        const names = [...environ(p).keys()];
        expect(names.filter((n) => !LAUNCHER_NAMES.test(n)), `pid ${p} ${cmdline(p)[0]}`).toEqual([]);
      }
    }
  });
});

describe.skipIf(!HAS_BWRAP)("kernel settings and namespaces under bwrap (issue 19, item 3)", () => {
  let dataDir: string;
  let workspace: string;
  let daemon: Daemon;

  beforeAll(async () => {
    dataDir = tempDir("klbr-kd-");
    workspace = tempDir("klbr-kw-");
    daemon = await startDaemon(dataDir, workspace, ["--sandbox", "bwrap"], process.env);
  }, 60_000);

  afterAll(async () => {
    if (daemon) {
      daemon.client.close();
      await stopDaemon(daemon.child);
    }
    for (const dir of [dataDir, workspace]) if (dir) removeTree(dir);
  });

  // Opened for writing and closed without a byte written: a failure before the fix changes nothing.
  const SETTINGS = ["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/domainname", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger", "/sys/kernel/profiling", "/sys/kernel/mm/transparent_hugepage/enabled"];
  const OPEN_ALL = [
    "import os, json",
    "r = {}",
    `for p in ${JSON.stringify(SETTINGS)}:`,
    "    if not os.path.exists(p): continue",
    "    try:",
    "        os.close(os.open(p, os.O_WRONLY)); r[p] = 'writable'",
    "    except OSError as e: r[p] = 'refused'",
    "r['ns'] = {n: os.readlink('/proc/self/ns/' + n) for n in ('uts', 'ipc', 'cgroup', 'pid') if os.path.exists('/proc/self/ns/' + n)}",
  ].join("\n");

  test("a cell and a workspace.run command can write none of /proc/sys, /proc/sysrq-trigger, /sys (a root daemon too)", async () => {
    const r = await probe(
      daemon.client,
      `${OPEN_ALL}\ncell = dict(r)\nrun = await runtime.run([sys.executable, '-c', ${JSON.stringify(`${OPEN_ALL}\nprint(json.dumps(r))`)}])\nr = {'cell': cell, 'run': json.loads(run['stdout'])}`,
    );
    for (const side of [r.cell, r.run] as Array<Record<string, unknown>>) {
      expect(side["/proc/sys/kernel/core_pattern"]).toBe("refused");
      expect(side["/proc/sys/kernel/domainname"]).toBe("refused");
      for (const path of SETTINGS) if (path in side) expect(side[path], path).toBe("refused");
    }
  });

  test("cells and commands get their own uts, ipc, cgroup (where the kernel has it) and pid namespaces", async () => {
    const host = (n: string) => readlinkSync(`/proc/self/ns/${n}`);
    const r = await probe(
      daemon.client,
      `${OPEN_ALL}\ncell = r['ns']\nrun = await runtime.run([sys.executable, '-c', ${JSON.stringify(`${OPEN_ALL}\nprint(json.dumps(r['ns']))`)}])\nr = {'cell': cell, 'run': json.loads(run['stdout'])}`,
    );
    for (const ns of [r.cell, r.run] as Array<Record<string, string>>) {
      for (const name of ["uts", "ipc", "pid"]) expect(ns[name], name).not.toBe(host(name));
      if (ns.cgroup !== undefined) expect(ns.cgroup).not.toBe(host("cgroup"));
    }
  });
});

describe("a data directory inside the workspace (issue 19, item 2)", () => {
  test("serve --sandbox bwrap refuses it at start: SANDBOX_DATA_IN_WORKSPACE, exit 69, with what to do", async () => {
    const workspace = tempDir("klbr-dw-");
    try {
      const data = join(workspace, ".k", "data");
      const r = await klbr(["--data-dir", data, "--workspace", workspace, "serve", "--sandbox", "bwrap"]);
      expect(r.code).toBe(69);
      expect(r.stderr).toContain("klbr: SANDBOX_DATA_IN_WORKSPACE: the data directory");
      expect(r.stderr).toMatch(/\nhint: keep the data directory outside the workspace: pass --data-dir/);
      expect(r.stderr).not.toContain("klbr: serving");
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
