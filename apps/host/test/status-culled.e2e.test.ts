// Issue 38 (5), C19: `klbr status` tells a culled workbench from a dead one, text and --json,
// with the time of the cull; a worker that died is still `dead`.
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { tempDir } from "./helpers";
import { stopDaemon } from "./processes";
import { CLI, HOST_DIR, klbrRun } from "./cli-run";

let dataDir: string;
let workspace: string;
let daemon: ChildProcess | null = null;

const klbr = (args: string[]) => klbrRun(["--data-dir", dataDir, "--workspace", workspace, ...args]);

interface Bench {
  session_id: string;
  generation: string | null;
  pid: number | null;
  state: string;
  culled_at_ms: number | null;
}
interface StatusJson {
  workbenches: Bench[];
  sessions: Array<{ session_id: string; state: string; culled_at_ms: number | null }>;
  workbench_pool: { culled: number };
}

async function status(): Promise<StatusJson> {
  const r = await klbr(["status", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatusJson;
}

/** Polls `klbr status --json` (bounded) until `ok` holds of it. */
async function statusWhen(ok: (s: StatusJson) => boolean): Promise<StatusJson> {
  let last: StatusJson | undefined;
  for (let i = 0; i < 100; i++) {
    last = await status();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`status never got there: ${JSON.stringify(last)}`);
}

/** Start `klbr serve` with idle culling (2 s) and no spare, and wait for its control socket. */
async function serve(): Promise<ChildProcess> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "serve", "--idle-timeout", "2s", "--spare", "0"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
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

beforeAll(async () => {
  dataDir = tempDir("klbr-sc-");
  workspace = tempDir("klbr-scw-");
  expect((await klbr(["init"])).code).toBe(0);
  daemon = await serve();
}, 60_000);

afterAll(async () => {
  await stopDaemon(daemon);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("klbr status after a cull (C19)", () => {
  test("a culled workbench is `culled` with the time of the cull, a crashed one `dead`; a new generation is live again", async () => {
    const before = Date.now();
    expect((await klbr(["exec", "-s", "sleepy", "x = 1"])).code).toBe(0);
    // Past `stopping`: the root's workbench (started with the host) is culled too, and earlier, so
    // the pool's count alone says nothing of sleepy's cull.
    const culled = await statusWhen((s) => s.workbenches.some((b) => b.session_id === "sleepy" && b.state !== "ready" && b.state !== "stopping"));
    const sleepy = culled.workbenches.find((b) => b.session_id === "sleepy")!;
    expect(sleepy).toMatchObject({ generation: "g-1", state: "culled" });
    // The pool counts exactly the workbenches status lists as culled (none has started again yet).
    expect(culled.workbench_pool.culled).toBe(culled.workbenches.filter((b) => b.state === "culled").length);
    expect(sleepy.culled_at_ms).toBeGreaterThanOrEqual(before + 2000);
    expect(sleepy.culled_at_ms).toBeLessThanOrEqual(Date.now());
    expect(culled.sessions.find((s) => s.session_id === "sleepy")).toMatchObject({ state: "culled", culled_at_ms: sleepy.culled_at_ms });

    const text = await klbr(["status"]);
    expect(text.code).toBe(0);
    const stamp = new Date(sleepy.culled_at_ms!).toISOString();
    expect(text.stdout).toMatch(new RegExp(`^workbench  sleepy g-1 pid \\d+ culled at ${stamp.replace(/\./g, "\\.")}$`, "m"));
    expect(text.stdout).toMatch(new RegExp(`^session    sleepy .* workbench g-1 culled at ${stamp.replace(/\./g, "\\.")} `, "m"));
    expect(text.stdout).not.toMatch(/^workbench  sleepy .* dead/m);

    // The next cell runs on a new generation: live again, no cull time.
    expect((await klbr(["exec", "-s", "sleepy", "x = 2"])).code).toBe(0);
    const again = (await status()).workbenches.find((b) => b.session_id === "sleepy")!;
    expect(again.generation).toBe("g-2");
    expect(again.culled_at_ms).toBeNull();
    expect(again.state).not.toBe("culled");

    // A worker that dies between cells (a thread of its cell kills it, well inside the idle timeout) is `dead`, not `culled`.
    expect((await klbr(["exec", "-s", "crashy", "import os, signal, threading\nthreading.Timer(0.3, os.kill, (os.getpid(), signal.SIGKILL)).start()"])).code).toBe(0);
    const dead = await statusWhen((s) => s.workbenches.some((b) => b.session_id === "crashy" && b.state !== "ready"));
    expect(dead.workbenches.find((b) => b.session_id === "crashy")).toMatchObject({ generation: "g-1", state: "dead", culled_at_ms: null });
    expect((await klbr(["status"])).stdout).toMatch(/^workbench  crashy g-1 pid \d+ dead$/m);
  }, 120_000);
});
