import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { CLI, HOST_DIR, klbrRun } from "./cli-run";
import { tempDir } from "./helpers";

// `klbr serve --database URL` / KLBR_DATABASE_URL (C21) through the real binary: a URL that is not
// PostgreSQL's is a usage error before anything starts, a server that is not there is "cannot run
// here", and a real database is reached, migrated under the advisory lock, and the host runs on it.
let dataDir: string;
let db: Awaited<ReturnType<typeof testDatabase>>;
beforeAll(async () => {
  dataDir = tempDir("klbr-sd-");
  db = await testDatabase();
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await db?.stop();
});

const lines = (stderr: string) => stderr.trim().split("\n");

describe("a URL klbr cannot use is refused before the host starts", () => {
  test.each([
    [["--database", "mysql://root:hunter2@db/klbr"], {}, /^klbr: DATABASE_URL_INVALID: --database "mysql:\/\/root:\*\*\*@db\/klbr" is a mysql URL/],
    [["--database", "postgres://klbr@db"], {}, /^klbr: DATABASE_URL_INVALID: --database "postgres:\/\/klbr@db" names no database/],
    [[], { KLBR_DATABASE_URL: "klbr.sqlite" }, /^klbr: DATABASE_URL_INVALID: KLBR_DATABASE_URL "klbr.sqlite" is not a URL/],
  ])("serve %j %j: exit 64, one coded line and a hint, no password shown", async (args, env, first) => {
    const r = await klbrRun(["-d", dataDir, "serve", "--no-drive", ...args], { env: { ...process.env, ...env } });
    expect(r.code).toBe(64);
    const [line, hint, ...rest] = lines(r.stderr);
    expect(line).toMatch(first);
    expect(hint).toMatch(/^hint: --database \(KLBR_DATABASE_URL\) is a PostgreSQL URL/);
    expect(rest).toEqual([]);
    expect(r.stderr).not.toContain("hunter2");
  });
});

test("a server that is not there: DATABASE_UNAVAILABLE naming the URL, exit 69, after a bounded wait", async () => {
  const nowhere = tempDir("klbr-nopg-");
  try {
    const url = `postgres://klbr:s3cret@localhost:5432/klbr?host=${encodeURIComponent(nowhere)}`;
    const started = Date.now();
    const r = await klbrRun(["-d", dataDir, "serve", "--no-drive", "--database", url]);
    expect(r.code).toBe(69);
    const [line, hint] = lines(r.stderr);
    expect(line).toMatch(/^klbr: DATABASE_UNAVAILABLE: cannot use PostgreSQL at postgres:\/\/klbr:\*\*\*@localhost:5432\/klbr\?host=.*: connect ENOENT .*\.s\.PGSQL\.5432 \(ENOENT\)$/);
    expect(hint).toMatch(/^hint: check that PostgreSQL runs/);
    expect(r.stderr).not.toContain("s3cret");
    expect(Date.now() - started).toBeLessThan(30_000);
  } finally {
    rmSync(nowhere, { recursive: true, force: true });
  }
});

test("a database that does not exist on a running server: DATABASE_UNAVAILABLE with PostgreSQL's SQLSTATE", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const url = new URL(db.url!.replace(/^postgresql:/, "http:"));
  url.pathname = "/no_such_db";
  const r = await klbrRun(["-d", dataDir, "serve", "--no-drive", "--database", url.href.replace(/^http:/, "postgresql:")]);
  expect(r.code).toBe(69);
  expect(lines(r.stderr)[0]).toMatch(/^klbr: DATABASE_UNAVAILABLE: cannot use PostgreSQL at .*no_such_db.*: database "no_such_db" does not exist \(SQLSTATE 3D000\)$/);
});

test("a real database (also from KLBR_DATABASE_URL): migrated at start, the host runs on it, its records are in PostgreSQL", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const home = join(dataDir, "pg");
  const serve = spawn(CLI[0]!, [...CLI.slice(1), "-d", home, "serve", "--no-drive", "--spare", "0"], { cwd: HOST_DIR, env: { ...process.env, KLBR_DATABASE_URL: db.url! }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  serve.stderr!.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => serve.once("exit", (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      serve.stderr!.on("data", () => stderr.includes("klbr: serving") && resolve());
      void exited.then(() => reject(new Error(`serve did not start: ${stderr}`)));
    });
    expect(stderr).toMatch(/records in postgresql:\/\/klbr@/);
    const run = await klbrRun(["-d", home, "exec", "print(6 * 7)"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("42");
    // Read back from PostgreSQL, without the daemon's help: the reader opens the database itself.
    const log = await klbrRun(["-d", home, "log", "--json", "--kind", "execution", "--database", db.url!]);
    expect(log.code, log.stderr).toBe(0);
    const cells = log.stdout.trim().split("\n").map((l) => JSON.parse(l) as { kind: string; code?: string; status?: string });
    expect(cells.filter((c) => c.code === "print(6 * 7)")).toMatchObject([{ status: "ok" }]);
  } finally {
    serve.kill("SIGTERM");
  }
  expect(await exited).toBe(0);
  // No SQLite log beside it: the records went to PostgreSQL only.
  expect(existsSync(join(home, "klbr.sqlite"))).toBe(false);
  const client = new pg.Client({ connectionString: db.url! });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM public.__klbr_host_migrations");
    expect(rows[0]!.n).toBeGreaterThan(0);
    const cells = await client.query<{ status: string; session_id: string }>("SELECT status, session_id FROM executions WHERE code = 'print(6 * 7)'");
    expect(cells.rows).toEqual([{ status: "ok", session_id: "root" }]);
    // The default behaviour release is in the database by digest, so any other host can run it.
    const active = await client.query<{ digest: string }>("SELECT s.digest FROM activation_state s JOIN releases r ON r.digest = s.digest");
    expect(active.rows).toHaveLength(1);
  } finally {
    await client.end();
  }
}, 120_000);

test("--sqlite-file with --database names two logs: CLI_USAGE, exit 64", async () => {
  const r = await klbrRun(["-d", dataDir, "serve", "--no-drive", "--database", "postgres://klbr@localhost/klbr", "--sqlite-file", join(dataDir, "x.sqlite")]);
  expect(r.code).toBe(64);
  expect(lines(r.stderr)[0]).toMatch(/^klbr: CLI_USAGE: --sqlite-file and --database name two logs/);
});
