import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { postgresBinDir, testDatabase } from "../../../test-support/postgres";
import { databaseChoice } from "../src/db/database-url";
import { Host } from "../src/runtime/host";
import type { HostOptions } from "../src/runtime/host-options";
import type { PostgresChoice } from "../src/store/host-log";
import { pgMirror, type Mirror } from "./pg-mirror";

/**
 * Which database the embedded test hosts keep their records in: `KLBR_TEST_STORE=postgres` (the
 * `host-pg` project of vitest.config.ts) puts each on a fresh database of the run's PostgreSQL
 * cluster (C21's matrix); else SQLite in its data directory, as always.
 */
export const TEST_STORE: "sqlite" | "postgres" = process.env.KLBR_TEST_STORE === "postgres" ? "postgres" : "sqlite";

/** The PostgreSQL database of each data directory a test host ran on, so a host started again on it finds its log. */
const databases = new Map<string, string>();

/**
 * The options that put a test host on `dataDir` on its database: nothing on SQLite (the data
 * directory's own file); on PostgreSQL a database of its own, made on its first start, so no two
 * hosts (or test files) see each other's records, and the same one again for a restart.
 */
export async function testLogOptions(dataDir: string): Promise<Partial<HostOptions>> {
  if (TEST_STORE === "sqlite") return {};
  const key = resolve(dataDir);
  let url = databases.get(key);
  if (!url) {
    const db = await testDatabase();
    if (db.skip !== null) throw new Error(`KLBR_TEST_STORE=postgres: ${db.skip}`);
    url = db.url;
    databases.set(key, url);
  }
  return { postgres: databaseChoice(url) as PostgresChoice };
}

/**
 * Drop the PostgreSQL database of a data directory that is going away (its host stopped): the
 * run's cluster would otherwise hold one database per test host (8 MB each) until the run ends,
 * and removing them all then takes a minute.
 */
function dropTestDatabase(dataDir: string): void {
  const key = resolve(dataDir);
  const url = databases.get(key);
  if (!url) return;
  databases.delete(key);
  const parsed = new URL(url.replace(/^postgres(ql)?:/, "http:"));
  const name = decodeURIComponent(parsed.pathname.slice(1));
  const admin = url.replace(/\/[^/?]+(\?|$)/, "/postgres$1");
  const done = spawnSync(join(postgresBinDir()!, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", admin, "-c", `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`], { encoding: "utf8" });
  if (done.status !== 0) throw new Error(`dropping the test database ${name}: ${(done.stderr || done.stdout).trim()}`);
}

/**
 * `Host.start` for a test: on the test store (see TEST_STORE). On PostgreSQL, `host.db` and
 * `host.sqlite` are a read-only mirror of the host's database, refreshed at each use (pg-mirror.ts),
 * so the tests' reads run unchanged against what the PostgreSQL store wrote.
 */
export async function startHostOnTestStore(options: HostOptions): Promise<Host> {
  const log = options.postgres || options.database !== undefined ? {} : await testLogOptions(options.dataDir);
  const host = await Host.start({ ...options, ...log });
  if (log.postgres) mirrorReads(host, log.postgres.url);
  return host;
}

function mirrorReads(host: Host, url: string): void {
  const dir = tempDir("klbr-pgm-");
  let mirror: Mirror | null = null;
  const handles = () => (mirror ??= pgMirror(url, dir)).refresh();
  Object.defineProperty(host, "db", { get: () => handles().db, configurable: true });
  Object.defineProperty(host, "sqlite", { get: () => handles().sqlite, configurable: true });
  const stop = host.stop.bind(host);
  host.stop = async (...args: Parameters<Host["stop"]>) => {
    try {
      await stop(...args);
    } finally {
      mirror?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** A short temporary directory (Unix socket paths must stay under 108 bytes). */
export function tempDir(prefix = "klbr-h-"): string {
  return mkdtempSync(join("/tmp", prefix));
}

/**
 * `rm -rf` that works for a normal user too: a data directory's release snapshots are read-only
 * (directories 0555), which only root can empty without making them writable first.
 */
export function removeTree(dir: string): void {
  const open = (path: string): void => {
    try {
      if (!lstatSync(path).isDirectory()) return;
      chmodSync(path, 0o700);
      for (const name of readdirSync(path)) open(join(path, name));
    } catch {
      // gone, or not ours: rmSync says so if it matters
    }
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Start a host on a fresh data directory and workspace; `close` stops it and removes both. */
export async function startTestHost(options: Partial<HostOptions> = {}): Promise<{ host: Host; dataDir: string; workspace: string; close: () => Promise<void> }> {
  const dataDir = options.dataDir ?? tempDir();
  const workspace = options.workspace ?? tempDir("klbr-w-");
  const host = await startHostOnTestStore({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), ...options });
  return {
    host,
    dataDir,
    workspace,
    close: async () => {
      await host.stop();
      dropTestDatabase(dataDir);
      removeTree(dataDir);
      removeTree(workspace);
    },
  };
}

/** The text of a cell's result record. */
export function resultOf(report: { output: Array<{ stream: string; text: string }> }): string | undefined {
  return report.output.find((o) => o.stream === "result")?.text;
}

/**
 * Run `code` in a session's workbench; its last line is an awaitable expression whose value comes
 * back parsed from JSON, or the host error it raised as {"error": code, "message": ...}.
 */
export async function callInCell(host: Host, session: string, code: string): Promise<any> {
  const lines = code.trim().split("\n");
  const last = lines.pop()!;
  const cell = [
    "import json as _json",
    ...lines,
    "try:",
    `    _v = ${last}`,
    "except Exception as _e:",
    "    _v = {'error': getattr(_e, 'code', type(_e).__name__), 'message': str(_e)}",
    "print(_json.dumps(_v))",
  ].join("\n");
  const report = await host.execute(cell, session);
  if (report.status !== "ok") throw new Error(`cell in ${session} ended ${report.status}: ${report.error ?? JSON.stringify(report.failure)}`);
  const out = report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

/** Resolve once `check` holds, polling the host's own state (no wall-clock margin to outlast). */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}
