import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { WorkerSandbox } from "../src/index.js";
import { descendants } from "../src/tree.js";
import { noneAlive, PYTHON_DIR, startPython, waitFor } from "./helpers.js";

// The supervisor's side of a bubblewrap sandbox: the prefix, the SIGINT rung reaching the worker
// inside the pid namespace, and the namespace's init taking every process with it.
function hasBwrap(): boolean {
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "true"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const available = hasBwrap();
if (!available && process.env.CI === "true") throw new Error("bwrap (Debian bubblewrap) is required in CI: the sandbox tests never skip there");

const shared = mkdtempSync("/tmp/klbr-sbx-");
afterAll(() => rmSync(shared, { recursive: true, force: true }));

const bwrap: WorkerSandbox = {
  prefix: (dir) => [
    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
    "--bind", shared, shared, "--ro-bind", PYTHON_DIR, PYTHON_DIR, "--bind", dir, dir,
    "--unshare-pid", "--die-with-parent", "--new-session", "--",
  ],
  pidNamespace: true,
};

/** Run a cell that must succeed; its result text. */
async function value(worker: Awaited<ReturnType<typeof startPython>>, code: string): Promise<string> {
  const done = await worker.execute(code);
  if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
  return done.output.at(-1)!.text;
}

describe.skipIf(!available)("a worker under bwrap --unshare-pid", () => {
  it("runs cells as pid 2 of its own namespace, beside nothing but its init", async () => {
    const worker = await startPython({ sandbox: bwrap });
    try {
      expect(await value(worker, "1+1")).toBe("2");
      expect(await value(worker, "import os\n(os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")).toBe("(2, [1, 2])");
      expect(worker.pid).toBeGreaterThan(2);
    } finally {
      await worker.shutdown();
    }
  });

  it("measures the tree through the sandbox's launchers: the worker alone keeps its peak, a child's cell has none (issue 38, item 3)", async () => {
    const worker = await startPython({ sandbox: bwrap });
    try {
      const alone = await worker.execute("x = bytearray(48 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ndel x");
      expect(alone.usage!.peakRssBytes).toBeGreaterThan(48 * 1024 * 1024);
      const child = await worker.execute("import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'b = bytearray(8 << 20)'], check=True)");
      expect(child.usage).toMatchObject({ cpuMs: expect.any(Number), peakRssBytes: null });
    } finally {
      await worker.shutdown();
    }
  });

  it("the SIGINT rung reaches the worker inside, not the sandbox process: the cell ends interrupted and the namespace lives on", async () => {
    const worker = await startPython({ sandbox: bwrap, interruptGraceMs: 300, sigintGraceMs: 20_000 });
    const marker = join(shared, "in-sleep");
    try {
      await worker.execute("kept = 'yes'");
      // The message rung is swallowed once; only a real SIGINT delivered to the worker ends the cell.
      const code = `import time\ntry:\n    open(${JSON.stringify(marker)}, 'w').close()\n    time.sleep(60)\nexcept BaseException:\n    pass\ntime.sleep(60)`;
      const running = worker.execute(code, { id: "swallow" });
      expect(await waitFor(() => existsSync(marker))).toBe(true);
      const outcome = await worker.interrupt("swallow");
      expect(outcome.rung).toBe("sigint");
      expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: "sigint" });
      expect(await value(worker, "kept")).toBe("'yes'");
    } finally {
      await worker.shutdown();
    }
  });

  // setsid + double fork + an empty environment: out of the group, out of reach of the tree tag.
  // The cell returns once both sleeps run (their names are visible in the namespace's /proc).
  const ESCAPE = [
    "import os, subprocess, time",
    "subprocess.run(['sh', '-c', 'env -i setsid sh -c \"sleep 1000 & sleep 1000\" & exit 0'])",
    "def sleeps():",
    "    n = 0",
    "    for p in filter(str.isdigit, os.listdir('/proc')):",
    "        try: n += open(f'/proc/{p}/comm').read().strip() == 'sleep'",
    "        except OSError: pass",
    "    return n",
    "while sleeps() < 2: time.sleep(0.01)",
    "'spawned'",
  ].join("\n");

  it("a hard stop kills the namespace's init: every process inside is gone", async () => {
    const worker = await startPython({ sandbox: bwrap });
    await value(worker, ESCAPE);
    const inside = descendants(worker.pid).map((p) => p.pid);
    expect(inside.length).toBeGreaterThanOrEqual(4); // init, worker, two sleeps
    const exit = await worker.hardStop("test");
    expect(exit.reason).toBe("test");
    expect(noneAlive([worker.pid, ...inside])).toBe(true);
  });

  it("a worker that dies on its own takes its namespace with it", async () => {
    const worker = await startPython({ sandbox: bwrap });
    await value(worker, ESCAPE);
    const inside = descendants(worker.pid).map((p) => p.pid);
    const done = await worker.execute("import os\nos._exit(3)");
    // The exit code is the sandbox process's: 3 when it passed the worker's on, or a SIGKILL when
    // the invalidation that follows the worker's EOF reached it first.
    expect(done).toMatchObject({ kind: "failed", reason: "worker_exited" });
    await worker.exited;
    expect(noneAlive(inside)).toBe(true);
  });

  it("a prefix that does not make the promised namespace is refused at the handshake", async () => {
    const wrong: WorkerSandbox = { prefix: () => ["env"], pidNamespace: true };
    await expect(startPython({ sandbox: wrong })).rejects.toMatchObject({ code: "WORKER_PROTOCOL" });
  });
});

