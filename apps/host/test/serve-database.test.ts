import { rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { klbrRun } from "./cli-run";
import { tempDir } from "./helpers";

// `klbr serve --database URL` / KLBR_DATABASE_URL (C21) through the real binary: a URL that is not
// PostgreSQL's is a usage error before anything starts, a server that is not there is "cannot run
// here", and a real database is reached and migrated under the advisory lock.
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

test("a real database (also from KLBR_DATABASE_URL): reached and migrated at start", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const r = await klbrRun(["-d", join(dataDir, "pg"), "serve", "--no-drive"], { env: { ...process.env, KLBR_DATABASE_URL: db.url! } });
  const client = new pg.Client({ connectionString: db.url! });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM public.__klbr_host_migrations");
    expect(rows[0]!.n).toBeGreaterThan(0);
  } finally {
    await client.end();
  }
  expect(r.stderr).toMatch(/DATABASE_UNSUPPORTED/);
});
