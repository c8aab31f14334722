import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openActivationStore } from "@klbr/activation";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { finishExecution, startExecution } from "../src/store/executions";
import { klbrRun, klbrShell, HOST_DIR } from "./cli-run";
import { tempDir } from "./helpers";

// Exit statuses, --version, usage errors, error lines and piped output, through the real binary.
let dataDir: string;

beforeAll(() => {
  dataDir = tempDir("klbr-cc-");
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** stderr's lines: `klbr: CODE: message` and its hint. */
function errorLines(stderr: string): string[] {
  return stderr.trim().split("\n").filter((l) => !l.startsWith("klbr: no daemon running"));
}

describe("usage and version", () => {
  test("--version prints the package version", async () => {
    const version = (JSON.parse(readFileSync(join(HOST_DIR, "package.json"), "utf8")) as { version: string }).version;
    expect(await klbrRun(["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  test.each([
    [["--bogus"], "unknown option '--bogus'"],
    [["frob"], "unknown command 'frob'"],
    [["say"], "missing required argument 'text'"],
    [["log", "-n"], "option '-n, --limit <n>' argument missing"],
    [["exec"], "give the cell as an argument or with -f FILE (exactly one)"],
    [["log", "-n", "x", "-d", "/nonexistent-klbr"], '-n/--limit needs a non-negative integer, got "x"'],
    [["say", "hi", "--session", "no spaces"], "--session must be an identifier"],
  ])("klbr %j exits 64 with one CLI_USAGE line and a hint", async (args, message) => {
    const r = await klbrRun(args);
    expect(r.code).toBe(64);
    expect(r.stdout).toBe("");
    const [first, hint, ...rest] = errorLines(r.stderr);
    expect(first).toMatch(/^klbr: CLI_USAGE: /);
    expect(first).toContain(message);
    expect(first).not.toMatch(/CLI_USAGE.*CLI_USAGE|error:/);
    expect(hint).toMatch(/^hint: run `klbr .*--help`/);
    expect(rest).toEqual([]);
  });

  test("klbr with no command prints its help on stderr and exits 64", async () => {
    const r = await klbrRun([]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("Usage: klbr");
  });

  test("--help documents the exit statuses", async () => {
    const r = await klbrRun(["--help"]);
    expect(r.code).toBe(0);
    for (const line of ["64   usage error", "75   nothing ran", "1    the cell raised", "69   cannot run here"]) expect(r.stdout).toContain(line);
  });
});

describe("errors name the file and say what to do", () => {
  test("a data directory that is a file: EEXIST, exit 69", async () => {
    const file = join(dataDir, "a-file");
    writeFileSync(file, "x");
    const r = await klbrRun(["-d", file, "init"]);
    expect(r.code).toBe(69);
    const [first, hint] = errorLines(r.stderr);
    expect(first).toBe(`klbr: EEXIST: file already exists, mkdir '${file}'`);
    expect(hint).toMatch(new RegExp(`^hint: ${file} is in the way`));
  });

  test("a database that is not SQLite: SQLITE_NOTADB naming it, exit 69", async () => {
    const dir = tempDir("klbr-cn-");
    writeFileSync(join(dir, "klbr.sqlite"), Buffer.alloc(4096, 7));
    const r = await klbrRun(["-d", dir, "log"]);
    rmSync(dir, { recursive: true, force: true });
    expect(r.code).toBe(69);
    const [first, hint, ...rest] = errorLines(r.stderr);
    expect(first).toBe(`klbr: SQLITE_NOTADB: file is not a database (${join(dir, "klbr.sqlite")})`);
    expect(hint).toMatch(/^hint: move .*klbr\.sqlite aside/);
    expect(rest).toEqual([]);
  });

  test("a wrong KLBR_PYTHON: PYTHON_NOT_FOUND naming it, exit 69, before any host starts", async () => {
    const r = await klbrRun(["-d", join(dataDir, "py"), "exec", "1+1"], { env: { ...process.env, KLBR_PYTHON: "/nonexistent/python3" } });
    expect(r.code).toBe(69);
    expect(r.stdout).toBe("");
    const [first, hint, ...rest] = errorLines(r.stderr);
    expect(first).toBe('klbr: PYTHON_NOT_FOUND: KLBR_PYTHON="/nonexistent/python3" is not an executable file');
    expect(hint).toMatch(/^hint: set KLBR_PYTHON/);
    expect(rest).toEqual([]);
  });

  test("a KLBR_PYTHON that is not Python: the worker's failure with a hint naming KLBR_PYTHON, exit 69", async () => {
    const r = await klbrRun(["-d", join(dataDir, "py2"), "exec", "1+1"], { env: { ...process.env, KLBR_PYTHON: "/bin/true" } });
    expect(r.code).toBe(69);
    const [first, hint, ...rest] = errorLines(r.stderr);
    expect(first).toMatch(/^klbr: WORKER_EXITED_EARLY: worker pid \d+ exited \(code 0, signal null\) before a valid hello$/);
    expect(hint).toMatch(/^hint: check that KLBR_PYTHON is Python 3\.11\+/);
    expect(rest).toEqual([]);
  });
});

describe("output is never lost on a pipe", () => {
  test("klbr log --json | (sleep 1; wc -l) counts every entry", async () => {
    const dir = tempDir("klbr-cp-");
    const sqlite = openSqlite(join(dir, "klbr.sqlite"));
    const db = migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
    const filler = "x".repeat(200);
    sqlite.transaction(() => {
      for (let i = 0; i < 3000; i++) {
        startExecution(db, { id: `ex-${i}`, sessionId: "root", generation: "g-1", code: `${filler} ${i}`, startedAtMs: 1_000 + i });
        finishExecution(db, `ex-${i}`, { status: "ok", endedAtMs: 1_001 + i });
      }
    })();
    sqlite.close();
    const r = await klbrShell(`KLBR -d '${dir}' log --json | (sleep 1; wc -l)`);
    rmSync(dir, { recursive: true, force: true });
    expect(r.stderr).toBe("");
    expect(Number(r.stdout.trim())).toBe(3000);
  }, 30_000);
});

describe("without a daemon", () => {
  test("klbr say records the input in an embedded host; the log shows it", async () => {
    const dir = tempDir("klbr-cs-");
    const said = await klbrRun(["-d", dir, "say", "--json", "hello from a script"]);
    expect(said.code).toBe(0);
    const posted = JSON.parse(said.stdout) as { event_id: number };
    const log = await klbrRun(["-d", dir, "log", "--json"]);
    rmSync(dir, { recursive: true, force: true });
    const entries = log.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.find((e) => e.kind === "input" && e.id === posted.event_id)).toMatchObject({ source: "operator" });
    expect(log.stdout).toContain("hello from a script");
  }, 60_000);

  test("exec --json piped through a slow reader stays whole past 64 KiB", async () => {
    const dir = tempDir("klbr-cj-");
    const cell = join(dir, "cell.py");
    // Control characters are six bytes each in JSON: 60,000 of them make a 360 KB line.
    writeFileSync(cell, "print('\\x01' * 60000)\n");
    const r = await klbrShell(`KLBR -d '${dir}' exec --json -f '${cell}' | (sleep 1; cat)`);
    rmSync(dir, { recursive: true, force: true });
    expect(r.stdout.length).toBeGreaterThan(300_000);
    const report = JSON.parse(r.stdout) as { status: string; output: Array<{ text: string }> };
    expect(report.status).toBe("ok");
    expect(report.output[0]!.text).toBe(`${"\x01".repeat(60000)}\n`);
  }, 60_000);
});
