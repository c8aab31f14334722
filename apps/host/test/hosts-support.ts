// What the many-hosts tests (hosts-*.test.ts) share: `klbr serve` processes on one SQLite file,
// each with its own data directory, and what they say about themselves.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { CLI, HOST_DIR, klbrRun, type Run } from "./cli-run";
import { removeTree, tempDir } from "./helpers";

/** One `klbr serve` of the group. */
export interface ServeHost {
  child: ChildProcess;
  dataDir: string;
  stderr: () => string;
  exited: Promise<void>;
}

/** Several hosts on one SQLite file, and everything they spawned, reaped by close(). */
export class HostGroup {
  readonly root = tempDir("klbr-hosts-");
  readonly database = join(this.root, "shared.sqlite");
  readonly workspace = join(this.root, "ws");
  private readonly hosts: ServeHost[] = [];
  private count = 0;

  constructor(
    private readonly args: string[] = [],
    /** Run before each host starts, on its data directory (e.g. `klbr route add`). */
    private readonly prepare: (dataDir: string) => Promise<void> = async () => undefined,
  ) {
    mkdirSync(this.workspace, { recursive: true });
  }

  /** Start one more host and wait until it serves. */
  async start(extra: string[] = []): Promise<ServeHost> {
    const dataDir = join(this.root, `h${this.count++}`);
    await this.prepare(dataDir);
    const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", this.workspace, "serve", "--sqlite-file", this.database, "--spare", "0", ...this.args, ...extra], {
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

  /** Read the shared log (read-only; closed after `fn`). */
  read<T>(fn: (db: Database.Database) => T): T {
    const db = new Database(this.database, { readonly: true, fileMustExist: true });
    try {
      db.pragma("busy_timeout = 5000");
      return fn(db);
    } finally {
      db.close();
    }
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
    removeTree(this.root);
  }
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
