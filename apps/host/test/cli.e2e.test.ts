import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { defaultPythonDir } from "../src/paths";
import { tempDir } from "./helpers";
import { stopDaemon } from "./processes";
import { CLI, HOST_DIR } from "./cli-run";


let dataDir: string;
let workspace: string;
let daemon: ChildProcess | null = null;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run one klbr command to completion. */
function klbr(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, ...args], { cwd: HOST_DIR, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.stdin.end(input ?? "");
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Start `klbr serve` and wait for its control socket. */
async function serve(): Promise<ChildProcess> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "serve"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (stderr.includes("klbr: serving")) {
        clearInterval(poll);
        resolve();
      } else if (child.exitCode !== null || Date.now() - started > 30_000) {
        clearInterval(poll);
        reject(new Error(`serve did not start: ${stderr}`));
      }
    }, 50);
  });
  return child;
}

/** Pids whose command line is exactly argv. */
function processesRunning(argv: string[]): number[] {
  const want = `${argv.join("\0")}\0`;
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8") === want;
      } catch {
        return false;
      }
    })
    .map(Number);
}

beforeAll(async () => {
  dataDir = tempDir("klbr-e-");
  workspace = tempDir("klbr-ew-");
  expect((await klbr(["init"])).code).toBe(0);
  daemon = await serve();
}, 60_000);

afterAll(async () => {
  await stopDaemon(daemon);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("klbr against a running daemon", () => {
  test("exec keeps state between commands and exits by the cell status", async () => {
    expect((await klbr(["exec", "counter = 41"])).code).toBe(0);
    const r = await klbr(["exec", "counter + 1"]);
    expect(r).toMatchObject({ code: 0, stdout: "42\n" });
    const e = await klbr(["exec", "raise ValueError('boom')"]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("ValueError: boom");
    const j = await klbr(["exec", "--json", "print('hi')"]);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: "ok", output: [{ stream: "stdout", text: "hi\n" }] });
  });

  test("a message the default review allows, and one it holds", async () => {
    const ok = await klbr(["exec", "(await runtime.send('build is green'))['status']"]);
    expect(ok.stdout).toBe("'confirmed'\n");
    const held = await klbr(["exec", "(await runtime.send(''))['status']"]);
    expect(held.stdout).toBe("'held'\n");
  });

  test("wait, then wake by :say in the repl", async () => {
    const w = await klbr(["exec", "await runtime.wait(None, reason='until the operator answers')"]);
    expect(w.code).toBe(0);
    expect(w.stderr).toContain("yielded");
    const repl = await klbr(["repl"], ":say here is the answer\n:quit\n");
    expect(repl.code).toBe(0);
    expect(repl.stdout).toMatch(/\[input\] event \d+ recorded/);
    expect(repl.stdout).toMatch(/\[wake\] wait wait-\S+ woken by event:\d+\n\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · operator\]\nhere is the answer\n/);
  });

  test("klbr say posts operator input through the daemon and wakes the waiting cell", async () => {
    const w = await klbr(["exec", "await runtime.wait(None, reason='until klbr say')"]);
    expect(w.code).toBe(0);
    const said = await klbr(["say", "answer from a script"]);
    expect(said.code).toBe(0);
    const [, id] = /^event (\d+) wake\n$/.exec(said.stdout) ?? [];
    expect(id).toBeDefined();
    const entries = (await klbr(["log", "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const waits = entries.filter((e) => e.kind === "wake" && String(e.woken_by) === `event:${id}`);
    expect(waits.length).toBeGreaterThan(0);
    const other = await klbr(["say", "--json", "--session", "side-session", "for another session"]);
    expect(other.code).toBe(0);
    expect(JSON.parse(other.stdout)).toMatchObject({ event_id: Number(id) + 1, attention: { effective: { action: "wake" } } });
  });

  test("-w naming another workspace than the running daemon's is an error (64), not silently ignored", async () => {
    const other = tempDir("klbr-eo-");
    const r = await klbr(["-w", other, "exec", "1+1"]);
    rmSync(other, { recursive: true, force: true });
    expect(r.code).toBe(64);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`klbr: WORKSPACE_MISMATCH: the running daemon serves workspace ${workspace}, not ${other} (-w)`);
    expect(r.stderr).toMatch(/\nhint: drop -w to use the daemon's workspace/);
    expect((await klbr(["exec", "1+1"])).stdout).toBe("2\n");
  });

  test("an oversize cell sent to the daemon is refused the same way: 75, CELL_TOO_LARGE, a durable row", async () => {
    const file = join(workspace, "huge.py");
    writeFileSync(file, `${"#".repeat(1_500_000)}\n1`);
    const r = await klbr(["exec", "-f", file]);
    expect(r.code).toBe(75);
    expect(r.stderr).toContain("klbr: CELL_TOO_LARGE: the cell is 1500002 bytes");
    const rows = (await klbr(["log", "--json", "--kind", "incident"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { kind: string; detail: { bytes: number } });
    expect(rows.filter((e) => e.kind === "incident.cell.refused").map((e) => e.detail.bytes)).toContain(1_500_002);
  });

  test("operator messages sent by a cell appear in the repl", async () => {
    const repl = await klbr(["repl"], "await runtime.send('visible in the repl')\n:quit\n");
    expect(repl.stdout).toContain("[to operator] visible in the repl");
  });

  test("Ctrl-C on klbr exec interrupts the running cell; the namespace survives", async () => {
    const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "exec", "survived = True\nwhile True: pass"], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    // Wait until the daemon reports the cell running, then interrupt the way a terminal does.
    // No iteration cap: a SIGINT sent before the cell runs would interrupt nothing and the cell would never end.
    for (;;) {
      const status = JSON.parse((await klbr(["status", "--json"])).stdout) as { workbenches: Array<{ running: string | null }> };
      if (status.workbenches[0]?.running) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(130);
    expect(stderr).toContain("interrupted");
    expect((await klbr(["exec", "survived"])).stdout).toBe("True\n");
  });

  test("Ctrl-C on klbr exec of a cell that blocks SIGINT and sleeps in C: it finished on its own, and says so (issue 38, item 1)", async () => {
    const cell = "import ctypes, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\nopen('blocked-started', 'w').close()\nleft = ctypes.CDLL(None).sleep(20)\nprint('after', left > 0)";
    const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "exec", "--json", cell], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (c) => (stdout += c));
    while (!existsSync(join(workspace, "blocked-started"))) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    // The kick cut the sleep short and the cell's next line ran: no rung ended it.
    const report = JSON.parse(stdout) as { status: string; ended_by: string; output: unknown };
    expect(report).toMatchObject({ status: "ok", ended_by: "worker", output: [{ stream: "stdout", text: "after True\n" }] });
    expect(code).toBe(0);
  });

  test("a workspace command with a timeout", async () => {
    const r = await klbr(["exec", "o = await runtime.run(['sleep', '30'], timeout_ms=200)\n(o['timed_out'], o['exit_code'])"]);
    expect(r.stdout).toBe("(True, None)\n");
  });

  test("activating a new behaviour release changes the hooks revision; the namespace survives", async () => {
    await klbr(["exec", "kept = 'namespace survives'"]);
    const draft = join(workspace, "behaviour");
    cpSync(join(defaultPythonDir(), "klbr_hooks"), draft, { recursive: true, filter: (src) => !src.includes("__pycache__") });
    writeFileSync(join(draft, "README.md"), "# a second revision\n");
    const rel = await klbr(["release", "--json", draft]);
    expect(rel.code).toBe(0);
    const release = JSON.parse(rel.stdout) as { path: string; digest: string };
    const before = JSON.parse((await klbr(["status", "--json"])).stdout) as { hooks: { revision: string; epoch: number } };
    expect(before.hooks.revision).not.toBe(release.digest);
    const act = await klbr(["exec", `(await runtime.activate(${JSON.stringify(release.path)}, ${before.hooks.epoch}))['epoch']`]);
    expect(act.stdout).toBe(`${before.hooks.epoch + 1}\n`);
    const after = JSON.parse((await klbr(["status", "--json"])).stdout) as { hooks: { revision: string } };
    expect(after.hooks.revision).toBe(release.digest);
    expect((await klbr(["exec", "kept"])).stdout).toBe("'namespace survives'\n");
  });

  test("kill -9 mid-cell: no worker survives, and a restart records the cell as interrupted", async () => {
    const marker = ["sleep", "4242"];
    const running = klbr(["exec", "import subprocess, time\np = subprocess.Popen(['sleep', '4242'])\ntime.sleep(60)"]);
    const started = Date.now();
    while (processesRunning(marker).length === 0 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 50));
    expect(processesRunning(marker).length).toBe(1);
    await stopDaemon(daemon, "SIGKILL");
    await running;
    const gone = Date.now();
    while (processesRunning(marker).length > 0 && Date.now() - gone < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(processesRunning(marker)).toEqual([]);
    daemon = await serve();
    const log = await klbr(["log", "--json"]);
    const entries = log.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const cut = entries.filter((e) => e.kind === "execution" && typeof e.code === "string" && (e.code as string).includes("4242"));
    expect(cut.at(-1)).toMatchObject({ status: "interrupted", ended_by: "host_restart" });
    expect(entries.some((e) => e.kind === "message")).toBe(true);
    expect(entries.filter((e) => e.kind === "activation" && e.outcome === "activated").map((e) => e.epoch_after)).toEqual([1, 2]);
    expect(existsSync(join(dataDir, "klbr.sqlite"))).toBe(true);
  }, 60_000);
});
