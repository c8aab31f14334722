// `klbr exec` and `klbr log --follow` against a `klbr serve` daemon, with live output (C16) on by
// default and off with --no-live-output. The cells wait for a file the test creates only after it
// has read their first line from the command's stdout: what it read was live.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ControlClient } from "../src/control/client";
import { CLI, HOST_DIR, klbrRun, klbrShell, type Run } from "./cli-run";
import { tempDir } from "./helpers";
import { spawnServe, stopDaemon } from "./processes";

let dataDir: string;
let workspace: string;
let daemon: ChildProcess | null = null;
let gates = 0;

const common = () => ["--data-dir", dataDir, "--workspace", workspace];

async function serve(extra: string[] = []): Promise<ChildProcess> {
  const daemon = spawnServe([...common(), "serve", ...extra]);
  await daemon.ready;
  return daemon.child;
}

/** Start a klbr command; `lines` fills with its stdout as it arrives. */
function start(args: string[]): { child: ChildProcess; stdout: () => string; done: Promise<Run> } {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...common(), ...args], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c) => (stdout += c));
  child.stderr!.on("data", (c) => (stderr += c));
  const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, stdout: () => stdout, done };
}

async function until(check: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

function gate(): { path: string; wait: string; open: () => void } {
  const path = join(workspace, `gate-${++gates}`);
  return { path, wait: `while not os.path.exists(${JSON.stringify(path)}):\n    time.sleep(0.005)\n`, open: () => writeFileSync(path, "") };
}

beforeAll(async () => {
  dataDir = tempDir("klbr-l-");
  workspace = tempDir("klbr-lw-");
  expect((await klbrRun([...common(), "init"])).code).toBe(0);
  daemon = await serve();
}, 180_000);

afterAll(async () => {
  await stopDaemon(daemon);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

// Timeouts are guards against a hang on a shared, loaded box (each test starts klbr processes), not measures.
describe("klbr exec with live output", { timeout: 240_000 }, () => {
  test("prints stdout and stderr as the cell writes them, then the result", async () => {
    const g = gate();
    const run = start(["exec", `import os, sys, time\nprint('first')\nprint('to stderr', file=sys.stderr)\n${g.wait}print('second')\n6 * 7`]);
    await until(() => run.stdout().includes("first\n"));
    expect(existsSync(g.path)).toBe(false); // the cell is still blocked: that line came live
    g.open();
    const done = await run.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toBe("first\nsecond\n42\n");
    expect(done.stderr).toBe("to stderr\n");
  });

  test("through a pipe: `| head -1` ends the command early, and a last partial line is not lost", async () => {
    const head = await klbrShell(`KLBR ${common().join(" ")} exec "for i in range(100000):\n    print(i)" | head -1`);
    expect(head.stdout).toBe("0\n");
    const partial = await klbrShell(`KLBR ${common().join(" ")} exec "import sys\nprint('a line')\n_ = sys.stdout.write('no newline at the end')" | cat`);
    expect(partial.stdout).toBe("a line\nno newline at the end");
  });

  test("| head -1 gets its line from live output while the cell runs; a line sent in two pieces arrives whole", async () => {
    const [g1, g2] = [gate(), gate()];
    // A watcher on the daemon sees the unfinished line go out on its own before the cell finishes it.
    const watcher = await ControlClient.connect(join(dataDir, "klbr.sock"));
    const seen: string[] = [];
    await watcher.watchOutput({ session: "root" }, (e) => void seen.push((e as { text: string }).text));
    const code = `import os, sys, time\n_ = sys.stdout.write('par')\n${g1.wait}_ = sys.stdout.write('tial line\\nsecond line\\n')\n${g2.wait}print('after head left')`;
    // The pipeline says when head has left (the group's echo) and how klbr exec ended (its own echo).
    const klbr = [...CLI, ...common()].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    const line = `(${klbr} exec "$CELL"; echo "exec exited $?" >&2) | { head -1; echo "head exited $?"; }`;
    const pipeline = spawn("sh", ["-c", line], { cwd: HOST_DIR, env: { ...process.env, CELL: code }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    pipeline.stdout!.on("data", (c) => (out += c));
    pipeline.stderr!.on("data", (c) => (err += c));
    const done = new Promise<number | null>((resolve) => pipeline.on("close", resolve));
    await until(() => seen.includes("par"));
    g1.open();
    await until(() => out.includes("head exited"));
    expect(out).toBe("partial line\nhead exited 0\n");
    expect(existsSync(g2.path)).toBe(false); // head had its line while the cell was still blocked
    g2.open();
    // The reader is gone: klbr exec still ends (what it writes later has nowhere to go), and the cell's record closes.
    expect(await done).toBe(0);
    expect(err).toMatch(/exec exited 0\n$/); // by the cell's status, as without the pipe
    watcher.close();
    const last = JSON.parse((await klbrRun([...common(), "log", "--json", "-n", "1"])).stdout.trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ status: "ok" });
  });

  test("--json is still one record", async () => {
    const run = await klbrRun([...common(), "exec", "--json", "print('x')\n1"]);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ status: "ok", output: [{ stream: "stdout", text: "x\n" }, { stream: "result", text: "1" }] });
  });

  test("klbr log --follow shows live lines of a running cell, marked live", async () => {
    const follow = start(["log", "--follow", "-n", "0"]);
    const g = gate();
    const marker = `marker-${gates}`;
    // The cell prints its marker until the gate exists, so a follower that connects late still sees one.
    const exec = start(["exec", `import os, time\nwhile not os.path.exists(${JSON.stringify(g.path)}):\n    print(${JSON.stringify(marker)})\n    time.sleep(0.05)`]);
    await until(() => follow.stdout().includes(marker));
    const line = follow.stdout().split("\n").find((l) => l.includes(marker))!;
    expect(line).toMatch(new RegExp(`^\\S+ live \\S+ session=root stdout\\| ${marker}$`));
    g.open();
    expect((await exec.done).code).toBe(0);
    follow.child.kill("SIGINT");
    await follow.done;
  });
});

describe("klbr serve --no-live-output", () => {
  test("exec prints the record at the end, as before", async () => {
    await stopDaemon(daemon);
    daemon = await serve(["--no-live-output"]);
    const run = await klbrRun([...common(), "exec", "print('later')\n2"]);
    expect(run.stdout).toBe("later\n2\n");
    const status = await klbrRun([...common(), "status", "--json"]);
    expect(JSON.parse(status.stdout)).toMatchObject({ live_output: false });
  }, 240_000);
});
