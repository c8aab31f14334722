import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CLI, HOST_DIR, klbrRun } from "./cli-run";
import { tempDir } from "./helpers";

// Issue 11 item 5 through the real binary: paths, embedded hints, init, log filters, serve's log,
// oversize cells. (Usage, errors and pipes: cli-conventions.test.ts; say and -w against a daemon: cli.e2e.)
let root: string;
beforeAll(() => {
  root = tempDir("klbr-ci-");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function until(check: () => boolean, ms = 30_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

function logOf(stdout: string): Array<Record<string, unknown>> {
  return stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("paths and init", () => {
  test("under pnpm, relative paths resolve against INIT_CWD (where the user typed them), and init prints to stdout", async () => {
    const user = join(root, "user-dir");
    mkdirSync(user);
    const env = { ...process.env, INIT_CWD: user, npm_lifecycle_script: "node apps/host/bin/klbr.js" };
    const r = await klbrRun(["-d", "./data", "init"], { env, cwd: HOST_DIR });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`initialised ${join(user, "data")}`);
    expect(r.stderr).toBe("");
    expect(existsSync(join(user, "data", "klbr.sqlite"))).toBe(true);
    expect(existsSync(join(HOST_DIR, "data"))).toBe(false);
    // A cell file named relative to the user's directory.
    writeFileSync(join(user, "cell.py"), "40 + 2\n");
    expect(await klbrRun(["-d", "./data", "-w", user, "exec", "-f", "./cell.py"], { env, cwd: HOST_DIR })).toMatchObject({ code: 0, stdout: "42\n" });
    // Outside pnpm's script, INIT_CWD is not the user's directory (a test run under pnpm inherits it too).
    const plain = await klbrRun(["-d", "./nonexistent-klbr-dir", "log"], { env: { ...process.env, INIT_CWD: user, npm_lifecycle_script: "vitest run" }, cwd: HOST_DIR });
    expect(plain.stderr).toContain(`no klbr database at ${join(HOST_DIR, "nonexistent-klbr-dir", "klbr.sqlite")}`);
  }, 60_000);
});

describe("an embedded host", () => {
  test("exec says once on stderr that the namespace will not persist and how to keep one", async () => {
    const r = await klbrRun(["-d", join(root, "emb"), "-w", root, "exec", "1+1"]);
    expect(r).toMatchObject({ code: 0, stdout: "2\n" });
    expect(r.stderr.match(/namespace ends with it; run `klbr serve` to keep one/g)).toHaveLength(1);
  }, 60_000);

  test("a second embedded exec while one runs: nothing ran (75) and a hint to run klbr serve", async () => {
    const data = join(root, "busy");
    const started = join(root, "busy-started");
    const go = join(root, "busy-go");
    const cell = `import os, time\nopen(${JSON.stringify(started)}, 'w').close()\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.02)\n'first'`;
    const first = klbrRun(["-d", data, "-w", root, "exec", cell]);
    expect(await until(() => existsSync(started), 60_000)).toBe(true);
    const second = await klbrRun(["-d", data, "-w", root, "exec", "1+1"]);
    writeFileSync(go, "");
    expect(second.code).toBe(75);
    expect(second.stdout).toBe("");
    const lines = second.stderr.trim().split("\n").filter((l) => !l.startsWith("klbr: no daemon running"));
    expect(lines[0]).toMatch(/^klbr: HOST_ALREADY_RUNNING: a klbr host \(pid \d+\) already uses this data directory/);
    expect(lines[1]).toMatch(/^hint: .*run `klbr serve` so commands share one host/);
    expect(await first).toMatchObject({ code: 0, stdout: "'first'\n" });
  }, 90_000);

  test("an oversize cell is refused before running whatever its size: exit 75, CELL_TOO_LARGE, a durable row; 262,144 bytes still runs", async () => {
    const data = join(root, "big");
    const atLimit = join(root, "at-limit.py");
    writeFileSync(atLimit, `${"#".repeat(262_144 - 2)}\n1`);
    expect(Buffer.byteLength(readFileSync(atLimit))).toBe(262_144);
    expect(await klbrRun(["-d", data, "-w", root, "exec", "-f", atLimit])).toMatchObject({ code: 0, stdout: "1\n" });
    for (const size of [262_145, 2_000_000]) {
      const file = join(root, `big-${size}.py`);
      writeFileSync(file, `${"#".repeat(size - 2)}\n1`);
      const r = await klbrRun(["-d", data, "-w", root, "exec", "-f", file]);
      expect(r.code).toBe(75);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`klbr: CELL_TOO_LARGE: the cell is ${size} bytes; a cell's source is at most 262144 bytes (UTF-8), so nothing ran`);
    }
    const log = logOf((await klbrRun(["-d", data, "log", "--json", "--kind", "incident"])).stdout);
    expect(log.filter((e) => e.kind === "incident.cell.refused").map((e) => (e.detail as { bytes: number }).bytes)).toEqual([262_145, 2_000_000]);
    const executions = logOf((await klbrRun(["-d", data, "log", "--json", "--kind", "execution"])).stdout);
    expect(executions).toHaveLength(1);
  }, 90_000);
});

describe("klbr log filters", () => {
  let data: string;
  let first: string;
  beforeAll(async () => {
    data = join(root, "logf");
    const r = await klbrRun(["-d", data, "-w", root, "exec", "--json", "(await runtime.send('one'))['status']"]);
    first = (JSON.parse(r.stdout) as { id: string }).id;
    await klbrRun(["-d", data, "-w", root, "say", "--session", "other", "for the other session"]);
  }, 90_000);

  test("requests are folded under their cell for people; --requests and --json keep one line each", async () => {
    const kinds = (lines: string[]) => lines.map((l) => l.split(" ")[1]);
    const human = (await klbrRun(["-d", data, "log", "--execution", first])).stdout.trim().split("\n");
    expect(kinds(human)).not.toContain("request");
    expect(human.filter((l) => l.split(" ")[1] === "execution")).toHaveLength(1);
    expect(human.find((l) => l.split(" ")[1] === "execution")).toMatch(new RegExp(`id="${first}".*requests=\\["local.send"\\]`));
    const flat = (await klbrRun(["-d", data, "log", "--execution", first, "--requests"])).stdout.trim().split("\n");
    expect(kinds(flat).filter((k) => k === "request")).toHaveLength(1);
    expect(flat.some((l) => / request .*method="local.send"/.test(l))).toBe(true);
    const json = logOf((await klbrRun(["-d", data, "log", "--json", "--execution", first])).stdout);
    expect(json.map((e) => e.kind)).toContain("request");
  });

  test("--execution, --session, --kind, --since", async () => {
    const byExec = logOf((await klbrRun(["-d", data, "log", "--json", "--execution", first])).stdout);
    expect(byExec.length).toBeGreaterThan(1);
    expect(byExec.every((e) => e.id === first || e.execution_id === first)).toBe(true);
    const other = logOf((await klbrRun(["-d", data, "log", "--json", "--session", "other"])).stdout);
    expect(other.map((e) => e.kind)).toEqual(["input"]);
    const inputs = logOf((await klbrRun(["-d", data, "log", "--json", "--kind", "input"])).stdout);
    expect(inputs.every((e) => e.kind === "input")).toBe(true);
    const all = logOf((await klbrRun(["-d", data, "log", "--json"])).stdout);
    expect((await klbrRun(["-d", data, "log", "--json", "--since", "1h"])).stdout.trim().split("\n")).toHaveLength(all.length);
    expect((await klbrRun(["-d", data, "log", "--json", "--since", "2999-01-01"])).stdout).toBe("");
    const cut = Math.max(...all.map((e) => e.at_ms as number));
    expect(logOf((await klbrRun(["-d", data, "log", "--json", "--since", String(cut)])).stdout).every((e) => (e.at_ms as number) >= cut)).toBe(true);
    for (const [flag, value] of [["--since", "yesterday"], ["--execution", "no spaces"]]) {
      const r = await klbrRun(["-d", data, "log", flag!, value!]);
      expect(r.code).toBe(64);
      expect(r.stderr).toMatch(/^klbr: CLI_USAGE: /);
    }
  }, 60_000);
});

describe("klbr serve logs what it does", () => {
  test("--json --log-level debug: one JSON object per line: serving, workers, cells, stopping", async () => {
    const data = join(root, "srv");
    const child = spawn(CLI[0]!, [...CLI.slice(1), "-d", data, "-w", root, "serve", "--json", "--log-level", "debug"], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const events = () => stderr.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event: string; level: string });
    expect(await until(() => stderr.includes('"event":"serving"'))).toBe(true);
    expect((await klbrRun(["-d", data, "exec", "6*7"])).stdout).toBe("42\n");
    expect(await until(() => events().some((e) => e.event === "execution"))).toBe(true);
    const closed = new Promise((r) => child.on("close", r));
    child.kill("SIGTERM");
    await closed;
    const all = events();
    expect(all.map((e) => e.event)).toEqual(expect.arrayContaining(["serving", "kernel.reset", "activation", "execution", "stopping", "stopped"]));
    expect(all.find((e) => e.event === "kernel.reset")!.level).toBe("info");
    expect(all.find((e) => e.event === "execution")!.level).toBe("debug");
  }, 90_000);

  test("the default level (info) leaves cells out; --log-level warn leaves out start and workers; a bad level is a usage error", async () => {
    const bad = await klbrRun(["-d", join(root, "srv2"), "serve", "--log-level", "loud"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("klbr: CLI_USAGE: --log-level must be one of error, warn, info, debug, got \"loud\"");
    for (const [level, expectServing] of [["info", true], ["warn", false]] as const) {
      const data = join(root, `srv-${level}`);
      const child = spawn(CLI[0]!, [...CLI.slice(1), "-d", data, "-w", root, "serve", "--log-level", level], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (c) => (stderr += c));
      expect(await until(() => existsSync(join(data, "klbr.sock")))).toBe(true);
      expect((await klbrRun(["-d", data, "exec", "1"])).code).toBe(0);
      const closed = new Promise((r) => child.on("close", r));
      child.kill("SIGTERM");
      await closed;
      expect(stderr.includes("klbr: serving")).toBe(expectServing);
      expect(stderr.includes("kernel.reset")).toBe(expectServing);
      expect(stderr).not.toMatch(/\] \S+ execution /);
    }
  }, 120_000);
});
