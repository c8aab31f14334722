import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { watchGuard } from "../src/guard.js";
import { isAlive, killTreeOnce, machineScans, readProc, recordRoot, rememberBelow, rememberTree } from "../src/tree.js";
import { killAlive, startPython, waitFor } from "./helpers.js";

// Issue 23, item 4: at 500 sessions every workbench exit read all of /proc several times (the tree
// and the tagged processes), so each cull cost the host tens of milliseconds of blocked loop and
// the machine's process count grew the cost of every exit. A guard whose sweep ended clean is the
// subreaper of the whole tree: nothing of it is left to search for.

const GUARD = fileURLToPath(new URL("../guard/klbr_guard.py", import.meta.url));

function guarded(command: string) {
  const child = spawn("python3", ["-I", "-S", GUARD, "--status-fd", "3", "--", "sh", "-c", command], { stdio: ["ignore", "pipe", "ignore", "pipe"] });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  return { child, report: watchGuard(child.stdio[3] as Readable), out: () => out };
}

// A child that leaves the command's session and outlives it, printed by pid.
const LEAVES_ONE = "setsid sleep 1000 & echo $!";
const BACKGROUND = ["import subprocess", "p = subprocess.Popen(['sleep', '1000'], start_new_session=True)", "print(p.pid)"].join("\n");

describe("the guard's clean report", () => {
  it("says clean once its sweep killed what the command left, and the pipe carries nothing else", async () => {
    const { child, report, out } = guarded(LEAVES_ONE);
    expect(await report.status).toMatchObject({ pid: expect.any(Number) });
    expect(await report.clean).toBe(true);
    await new Promise((resolve) => child.once("exit", resolve));
    expect(isAlive(Number(out().trim()))).toBe(false);
  });

  it("is not clean when the guard is killed before its sweep", async () => {
    const { child, report } = guarded("sleep 1000");
    const status = await report.status;
    expect(status).toMatchObject({ pid: expect.any(Number) });
    child.kill("SIGKILL");
    expect(await report.clean).toBe(false);
    killAlive(["pid" in status ? status.pid : 0]);
  });
});

/** A Python worker whose cell left a setsid'd `sleep` running, and that sleep's pid. */
async function withBackground() {
  const worker = await startPython();
  const done = await worker.execute(BACKGROUND);
  const bg = Number(done.kind === "cell" ? done.output.map((o) => o.text).join("") : NaN);
  return { worker, bg };
}

describe("a workbench's exit reads only its own tree when the guard swept clean", () => {
  it("shutdown: no scan of every process, and the setsid'd background process is dead", async () => {
    const { worker, bg } = await withBackground();
    expect(isAlive(bg)).toBe(true);
    const before = machineScans.count;
    await worker.shutdown();
    expect(machineScans.count).toBe(before);
    expect(isAlive(bg)).toBe(false);
  });

  it("a worker that exits on its own: the same", async () => {
    const { worker, bg } = await withBackground();
    const before = machineScans.count;
    expect(await worker.execute("import os\nos._exit(3)")).toMatchObject({ kind: "failed", exit: { code: 3 } });
    await worker.exited;
    expect(machineScans.count).toBe(before);
    expect(isAlive(bg)).toBe(false);
  });

  it("a guard killed from outside did not sweep: the host searches the machine, and the orphan dies", async () => {
    const { worker, bg } = await withBackground();
    const guard = readProc(worker.pid)!.ppid;
    const before = machineScans.count;
    try {
      process.kill(guard, "SIGKILL");
      await worker.exited;
      expect(machineScans.count).toBeGreaterThan(before);
      expect(await waitFor(() => !isAlive(bg), 5000)).toBe(true);
    } finally {
      killAlive([bg]);
    }
  });
});

describe("rememberBelow", () => {
  it("finds what a scan of /proc finds below a live root, without the scan", async () => {
    const sh = spawn("sh", ["-c", "sleep 1000 & (sleep 1000 & wait) & wait"], { stdio: "ignore" });
    try {
      expect(await waitFor(() => rememberTree(sh.pid!).size === 3)).toBe(true);
      const before = machineScans.count;
      const below = rememberBelow(sh.pid!);
      expect(machineScans.count).toBe(before);
      expect([...below.entries()].sort()).toEqual([...rememberTree(sh.pid!).entries()].sort());
    } finally {
      killAlive([...rememberTree(sh.pid!).keys(), sh.pid!]);
    }
  });
});

describe("killTreeOnce on a live guard (subreaper)", () => {
  it("freezes and kills its tree, a setsid'd grandchild too, walking only the tree", async () => {
    const { child, report, out } = guarded("setsid sleep 1000 & echo $!; sleep 1000");
    await report.status;
    expect(await waitFor(() => out().trim() !== "")).toBe(true);
    const grandchild = Number(out().trim());
    expect(await waitFor(() => readProc(grandchild)?.pgid === grandchild)).toBe(true);
    const known = recordRoot(child.pid!);
    const before = machineScans.count;
    try {
      killTreeOnce(child.pid!, known, true);
      expect(machineScans.count).toBe(before);
      expect(known.has(grandchild)).toBe(true);
      expect(await waitFor(() => !isAlive(grandchild), 5000)).toBe(true);
    } finally {
      killAlive([grandchild, child.pid!]);
    }
  });
});
