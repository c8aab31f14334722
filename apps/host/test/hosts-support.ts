// What the many-hosts tests (hosts-*.test.ts) share: `klbr serve` processes on one log (a SQLite
// file, or a PostgreSQL database of the run's throwaway cluster), each with its own data
// directory, and what they say about themselves. The tests run once per kind of log (C21's matrix).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { testDatabase } from "../../../test-support/postgres";
import { CLI, HOST_DIR, klbrRun, type Run } from "./cli-run";
import { removeTree, tempDir } from "./helpers";

/** One `klbr serve` of the group. */
export interface ServeHost {
  child: ChildProcess;
  dataDir: string;
  stderr: () => string;
  exited: Promise<void>;
}

/** Which log the hosts share. */
export type LogKind = "sqlite" | "postgres";
/** Every kind of log a many-hosts test runs against (C21's matrix): a shared SQLite file, and a database of the run's PostgreSQL cluster. */
export const LOG_KINDS: LogKind[] = ["sqlite", "postgres"];

/** Several hosts on one log, and everything they spawned, reaped by close(). */
export class HostGroup {
  readonly root = tempDir("klbr-hosts-");
  /** The SQLite file the hosts share (kind sqlite). */
  readonly database = join(this.root, "shared.sqlite");
  readonly workspace = join(this.root, "ws");
  private readonly hosts: ServeHost[] = [];
  private count = 0;
  private postgres: { url: string; stop(): Promise<void>; pool: pg.Pool } | null = null;

  constructor(
    private readonly args: string[] = [],
    /** Run before each host starts, on its data directory (e.g. `klbr route add`). */
    private readonly prepare: (dataDir: string) => Promise<void> = async () => undefined,
    readonly kind: LogKind = "sqlite",
    /** For postgres: this database (a cluster of the test's own, e.g. one it restarts) instead of a fresh one of the run's cluster. */
    private readonly url?: string,
  ) {
    mkdirSync(this.workspace, { recursive: true });
  }

  /** The serve options that name the shared log (a fresh database of the run's cluster for postgres). */
  private async logArgs(): Promise<string[]> {
    if (this.kind === "sqlite") return ["--sqlite-file", this.database];
    if (!this.postgres && this.url) this.postgres = { url: this.url, stop: async () => {}, pool: readerPool(this.url) };
    if (!this.postgres) {
      const db = await testDatabase();
      if (db.skip !== null) throw new Error(db.skip);
      this.postgres = { url: db.url, stop: db.stop, pool: readerPool(db.url) };
    }
    return ["--database", this.postgres.url];
  }

  /** Start one more host and wait until it serves. */
  async start(extra: string[] = []): Promise<ServeHost> {
    const dataDir = join(this.root, `h${this.count++}`);
    await this.prepare(dataDir);
    const log = await this.logArgs();
    const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", this.workspace, "serve", ...log, "--spare", "0", ...this.args, ...extra], {
      cwd: HOST_DIR,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (c) => (stderr += c));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const host: ServeHost = { child, dataDir, stderr: () => stderr, exited };
    this.hosts.push(host);
    await new Promise<void>((resolve, reject) => {
      const onData = () => stderr.includes("klbr: serving") && resolve();
      child.stderr!.on("data", onData);
      void exited.then(() => reject(new Error(`serve did not start: ${stderr}`)));
    });
    return host;
  }

  /** `klbr status --json` of a host. */
  async status(host: ServeHost): Promise<Record<string, any>> {
    const run = await klbrRun(["--data-dir", host.dataDir, "status", "--json"]);
    if (run.code !== 0) throw new Error(`status failed (${run.code}): ${run.stderr}`);
    return JSON.parse(run.stdout) as Record<string, any>;
  }

  /** `klbr exec` through a host. */
  exec(host: ServeHost, code: string, session?: string): Promise<Run> {
    return klbrRun(["--data-dir", host.dataDir, "exec", ...(session ? ["--session", session] : []), code]);
  }

  /**
   * Rows of one query on the shared log, `?` placeholders, the same SQL for both kinds (counts
   * come back as numbers from both: PostgreSQL's bigint count is read as a number).
   */
  async all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]> {
    if (this.kind === "sqlite") {
      const db = new Database(this.database, { readonly: true, fileMustExist: true });
      try {
        db.pragma("busy_timeout = 5000");
        return db.prepare(sql).all(...params) as T[];
      } finally {
        db.close();
      }
    }
    if (!this.postgres) throw new Error("no host started yet: the database is made by the first start");
    let n = 0;
    const { rows } = await this.postgres.pool.query(sql.replace(/\?/g, () => `$${++n}`), params);
    return rows.map((row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === "n" ? Number(v) : v]))) as T[];
  }

  /** The first row of a query, or undefined. */
  async one<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return (await this.all<T>(sql, ...params))[0];
  }

  /** Rows per table of the log, overall and for one session (tables with a session_id column); migrations' own tables left out. */
  async tableCounts(sessionId: string): Promise<Record<string, number>> {
    const listing =
      this.kind === "sqlite"
        ? "SELECT m.name AS name, (SELECT count(*) FROM pragma_table_info(m.name) WHERE name = 'session_id') AS scoped FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '%migrations%'"
        : "SELECT t.table_name AS name, (SELECT count(*) FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'session_id')::int AS scoped FROM information_schema.tables t WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND t.table_name NOT LIKE '%migrations%'";
    const out: Record<string, number> = {};
    for (const { name, scoped } of await this.all<{ name: string; scoped: number }>(listing)) {
      out[name] = (await this.one<{ n: number }>(`SELECT count(*) AS n FROM "${name}"`))!.n;
      if (Number(scoped) > 0) out[`${name}[${sessionId}]`] = (await this.one<{ n: number }>(`SELECT count(*) AS n FROM "${name}" WHERE session_id = ?`, sessionId))!.n;
    }
    return out;
  }

  /** Stop every host still running (SIGCONT first: a stopped host cannot act on SIGTERM), SIGKILL after 20 s, then remove the files. */
  async close(): Promise<void> {
    for (const h of this.hosts) {
      if (h.child.exitCode === null && h.child.signalCode === null) {
        h.child.kill("SIGCONT");
        h.child.kill("SIGTERM");
      }
    }
    await Promise.race([Promise.all(this.hosts.map((h) => h.exited)), pause(20_000)]);
    for (const h of this.hosts) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill("SIGKILL");
    await Promise.all(this.hosts.map((h) => h.exited));
    if (this.postgres) {
      await this.postgres.pool.end();
      await this.postgres.stop();
    }
    removeTree(this.root);
  }
}

/** The test's own reading connections; an idle one cut by a server restart is dropped, not thrown (the next query opens another). */
function readerPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on("error", () => undefined);
  return pool;
}

/** Wait `ms`. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` every 50 ms until it is truthy or `ms` passed; its last value. */
export async function within<T>(ms: number, check: () => T | Promise<T>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= end) return value;
    await pause(50);
  }
}

/** Whether a process is alive (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}
