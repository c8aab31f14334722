// Issue 26, item 2: `klbr serve` sent SIGTERM at any moment of its start (taking the lock, crash
// recovery, starting workers, opening the control socket) stops cleanly: exit 0, no worker left,
// the log closed. KLBR_SERVE_STOP_ROUNDS sets the count (CI runs a few; 100 ran green before merge).
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { tempDir } from "./helpers";
import { CLI, exec, startDaemon, until } from "./sandbox-support";

const ROUNDS = Number(process.env.KLBR_SERVE_STOP_ROUNDS ?? 5);
const HOST_DIR = join(import.meta.dirname, "..");
const crashed = tempDir("klbr-ssc-");
const workspace = tempDir("klbr-ssw-");
const dirs: string[] = [crashed, workspace];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** KLBR_LOOP_LOG=FILE: one line per round, for long local runs. */
const note = (line: string) => process.env.KLBR_LOOP_LOG && appendFileSync(process.env.KLBR_LOOP_LOG, `${line}\n`);

/** Pids whose environment holds KLBR_HOST_TREE=<tag>: what a host run started and left. */
function carrying(tag: string): number[] {
  const entry = `KLBR_HOST_TREE=${tag}`;
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/environ`, "latin1").split("\0").includes(entry);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function lockHolder(dataDir: string): number | null {
  try {
    return Number(readFileSync(join(dataDir, "klbr.lock.pid"), "utf8").trim());
  } catch {
    return null;
  }
}

// A data directory whose daemon was killed with a cell running: every start recovers it.
beforeAll(async () => {
  const daemon = await startDaemon(crashed, workspace, [], process.env);
  const inCell = join(workspace, "in-cell");
  void exec(daemon.client, `open(${JSON.stringify(inCell)}, 'w').close()\nimport time\ntime.sleep(1000)`).catch(() => undefined);
  expect(await until(() => existsSync(inCell), 30_000)).toBe(true);
  const exited = new Promise((resolve) => daemon.child.once("exit", resolve));
  daemon.child.kill("SIGKILL");
  await exited;
  daemon.client.close();
}, 60_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One round: serve on a copy of the crashed directory, SIGTERM `offsetMs` after it took the lock (or once it serves). */
async function round(offsetMs: number | "serving"): Promise<{ code: number | null; signal: string | null; stderr: string; tag: string; startedMs: number }> {
  const dataDir = tempDir("klbr-ssd-");
  dirs.push(dataDir);
  // Not the dead daemon's socket file (it cannot be copied, and the new host makes its own).
  cpSync(crashed, dataDir, { recursive: true, filter: (src) => !src.endsWith(".sock") });
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "serve"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let gone = false;
  void exited.then(() => (gone = true));
  // The host takes its lock (and writes its pid beside it) before crash recovery.
  expect(await until(() => gone || lockHolder(dataDir) === child.pid, 60_000)).toBe(true);
  const locked = Date.now();
  if (offsetMs === "serving") await until(() => gone || stderr.includes("klbr: serving"), 60_000);
  else await pause(offsetMs);
  const startedMs = Date.now() - locked;
  child.kill("SIGTERM");
  const exit = await exited;
  return { ...exit, stderr, tag: readFileSync(join(dataDir, "host-tree"), "utf8").trim(), startedMs };
}

describe("SIGTERM during klbr serve's start and recovery (issue 26, item 2)", () => {
  test(`${ROUNDS} rounds at random offsets: every one a clean stop`, async () => {
    // The first round measures how long a start takes here; the others land anywhere in it.
    const first = await round("serving");
    const span = first.startedMs * 1.2;
    const bad: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const offset = Math.random() * span;
      const r = i === 0 ? first : await round(offset);
      const left = carrying(r.tag);
      note(`round ${i} offset ${i === 0 ? "serving" : offset.toFixed(0)} of ${span.toFixed(0)} ms: exit ${r.code} signal ${r.signal} left ${left.length}`);
      if (r.code !== 0 || r.signal !== null || !r.stderr.includes("klbr: stopped") || left.length > 0) {
        bad.push(`round ${i} (offset ${i === 0 ? "serving" : offset.toFixed(0)} ms of ${span.toFixed(0)}): exit ${r.code} signal ${r.signal}, left ${left.join(",")}; stderr ${r.stderr.slice(-300)}`);
      }
    }
    expect(bad).toEqual([]);
  }, 120_000 + ROUNDS * 60_000);
});
