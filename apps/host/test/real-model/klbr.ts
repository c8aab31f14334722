// The klbr CLI, run from source, on one data directory and workspace: one-shot commands, a daemon
// (`klbr serve`), and reads of the daemon's log (its SQLite database) for the suite's checks.
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { MAX_CELLS_PER_TURN } from "./session-checks";
import Database from "better-sqlite3";
import { dataLayout } from "../../src/paths";
import { CLI, HOST_DIR, type Run } from "../cli-run";
import { tempDir } from "../helpers";

/** A klbr data directory and workspace, with the CLI bound to them. */
export class Klbr {
  readonly dataDir = tempDir("klbr-rm-");
  readonly workspace = tempDir("klbr-rmw-");
  private readonly daemons: ChildProcess[] = [];

  get database(): string {
    return dataLayout(this.dataDir).database;
  }

  /** The argv that runs klbr on this data directory (for a pseudo-terminal). */
  argv(args: string[]): string[] {
    return [...CLI, "--data-dir", this.dataDir, "--workspace", this.workspace, ...args];
  }

  run(args: string[], input = ""): Promise<Run> {
    const [file, ...rest] = this.argv(args);
    const child = spawn(file!, rest, { cwd: HOST_DIR, stdio: ["pipe", "pipe", "pipe"], env: process.env });
    return new Promise((resolve) => {
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c) => (stdout += c));
      child.stderr.on("data", (c) => (stderr += c));
      child.stdin.end(input);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** `klbr serve`, resolved once it says it is serving. */
  async serve(): Promise<{ child: ChildProcess; stderr: () => string }> {
    // A small model may repeat a failing cell until the turn's cell limit: 8 keeps that turn short (C10).
    const [file, ...rest] = this.argv(["serve", "--max-cells-per-turn", String(MAX_CELLS_PER_TURN)]);
    const child = spawn(file!, rest, { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"], env: process.env });
    this.daemons.push(child);
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on("data", (c) => {
        stderr += c;
        if (stderr.includes("klbr: serving")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`klbr serve exited ${code} before serving:\n${stderr}`)));
    });
    return { child, stderr: () => stderr };
  }

  /** Read the log (the daemon may be running: WAL readers never block it). */
  read<T>(fn: (sqlite: Database.Database) => T): T {
    const sqlite = new Database(this.database, { readonly: true, fileMustExist: true });
    try {
      sqlite.pragma("busy_timeout = 5000");
      return fn(sqlite);
    } finally {
      sqlite.close();
    }
  }

  async close(): Promise<void> {
    for (const d of this.daemons) await stop(d);
    rmSync(this.dataDir, { recursive: true, force: true });
    rmSync(this.workspace, { recursive: true, force: true });
  }
}

/** Stop a process and wait for it to exit. */
export function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}

/**
 * Poll an observable state of the log until `ready` returns a value (the session's turn ended, a
 * fold was recorded): a model's pace varies, so this waits on the state, never on a time.
 */
export async function until<T>(what: string, ready: () => T | undefined | null | false, timeoutMs = 1_500_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = ready();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The turn that `say` started has ended: a wait the session is in (created after `sinceMs`) and nothing running. */
export function turnEnded(sqlite: Database.Database, sinceMs: number, session = "root"): { id: string; reason: string; execution_id: string } | undefined {
  const running = sqlite.prepare("SELECT count(*) AS n FROM model_requests WHERE session_id = ? AND status = 'running'").get(session) as { n: number };
  const cells = sqlite.prepare("SELECT count(*) AS n FROM executions WHERE session_id = ? AND status = 'running'").get(session) as { n: number };
  if (running.n > 0 || cells.n > 0) return undefined;
  return sqlite
    .prepare("SELECT id, reason, execution_id FROM waits WHERE session_id = ? AND state = 'waiting' AND created_at_ms >= ? ORDER BY created_at_ms DESC LIMIT 1")
    .get(session, sinceMs) as { id: string; reason: string; execution_id: string } | undefined;
}
