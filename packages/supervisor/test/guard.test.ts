import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Worker } from "../src/index.js";
import { isAlive, readProc } from "../src/tree.js";
import { environValue, killAlive, startPython, waitFor } from "./helpers.js";

// A descendant out of reach of every host-side means: its environment is cleared (no KLBR_TREE),
// it leads its own session, its parent (sh) is gone, and it holds the worker's stdout and stderr.
const ESCAPE = [
  "import subprocess",
  "subprocess.run(['/bin/sh', '-c', 'setsid sleep 1000 & echo \"escaped $!\" >&2'], env={})",
].join("\n");

async function escapedPid(worker: Worker): Promise<number> {
  expect(await waitFor(() => /escaped \d+/.test(worker.stderrTail))).toBe(true);
  const pid = Number(/escaped (\d+)/.exec(worker.stderrTail)![1]);
  expect(environValue(pid, "KLBR_TREE")).toBeUndefined();
  // sh prints $! as soon as it forks; the child calls setsid a moment later (a loaded CI machine
  // showed it still in sh's group), so wait for it to lead its own session.
  expect(await waitFor(() => readProc(pid)?.pgid === pid)).toBe(true);
  return pid;
}

describe("the guard: a worker that dies on its own leaves no descendant (issue 10, item 3)", () => {
  it("os._exit in a cell: the env-cleared setsid'd orphan holding the pipes dies, and nothing hangs", async () => {
    const worker = await startPython();
    let child = 0;
    try {
      expect(await worker.execute(ESCAPE)).toMatchObject({ kind: "cell", status: "ok" });
      child = await escapedPid(worker);
      const done = await worker.execute("import os\nos._exit(3)");
      expect(done).toMatchObject({ kind: "failed", reason: "worker_exited", exit: { code: 3, signal: null } });
      await worker.exited;
      expect(isAlive(child)).toBe(false);
    } finally {
      killAlive([child]);
    }
  });

  it("SIGKILL from outside: the cell fails with the signal, the orphan dies", async () => {
    const worker = await startPython();
    let child = 0;
    try {
      const running = worker.execute(`${ESCAPE}\nimport time\ntime.sleep(1000)`);
      child = await escapedPid(worker);
      expect(isAlive(child)).toBe(true);
      process.kill(worker.pid, "SIGKILL");
      expect(await running).toMatchObject({ kind: "failed", source: "host", exit: { signal: "SIGKILL" } });
      await worker.exited;
      expect(isAlive(child)).toBe(false);
    } finally {
      killAlive([child]);
    }
  });
});

describe("the guard: workers die with the host, even after kill -9 (issue 10, item 1)", () => {
  it("a SIGKILLed host takes its (stopped) worker and the worker's escaped orphan with it", async () => {
    const script = fileURLToPath(new URL("./fakes/host-killed.ts", import.meta.url));
    const host = spawn(process.execPath, ["--import", "tsx", "--conditions=@klbr/source", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    host.stdout.on("data", (c: Buffer) => (out += c.toString()));
    let pids: number[] = [];
    try {
      expect(await waitFor(() => out.includes("\n"), 20_000)).toBe(true);
      pids = (JSON.parse(out.trim()) as { pids: number[] }).pids;
      expect(pids).toHaveLength(2);
      expect(pids.every((pid) => isAlive(pid))).toBe(true);
      expect(readProc(pids[0]!)!.state).toBe("T");
      // Identity is pid + start time: the suite spawns thousands of processes on a 32768-pid
      // machine, so a pid freed by the kill may already name someone else's process.
      const starts = new Map(pids.map((pid) => [pid, readProc(pid)!.start]));
      const survivors = () => pids.filter((pid) => isAlive(pid) && readProc(pid)?.start === starts.get(pid));
      host.kill("SIGKILL");
      await waitFor(() => survivors().length === 0, 10_000);
      expect(survivors().map((pid) => ({ pid, proc: readProc(pid) }))).toEqual([]);
    } finally {
      host.kill("SIGKILL");
      killAlive(pids);
    }
  });
});

describe("the guard script", () => {
  const guard = fileURLToPath(new URL("../guard/klbr_guard.py", import.meta.url));
  const run = (args: string[]) => {
    try {
      return { code: 0, out: execFileSync("python3", ["-I", "-S", guard, "--", ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
    } catch (err) {
      const e = err as { status: number | null; signal: string | null; stdout: string };
      return { code: e.status, signal: e.signal, out: e.stdout };
    }
  };

  it("exits with the command's code, or dies by the command's signal", () => {
    expect(run(["sh", "-c", "echo hi; exit 7"])).toMatchObject({ code: 7, out: "hi\n" });
    expect(run(["sh", "-c", "kill -TERM $$"])).toMatchObject({ code: null, signal: "SIGTERM" });
  });

  it("kills what the command left running when it exits, in its session or not", () => {
    const r = run(["sh", "-c", "setsid sleep 1000 & sleep 1000 & echo $! $(cat /proc/$$/stat | cut -d' ' -f1)"]);
    expect(r.code).toBe(0);
    const [bg] = r.out.trim().split(" ").map(Number);
    expect(isAlive(bg!)).toBe(false);
  });
});
