import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CLI, HOST_DIR, klbrRun, type Run } from "./cli-run";
import { tempDir } from "./helpers";
import { stopDaemon } from "./processes";

let dataDir: string;
let workspace: string;
let daemon: ChildProcess | null = null;

/** Run one klbr command against this test's data directory. */
function klbr(args: string[], input?: string): Promise<Run> {
  return klbrRun(["--data-dir", dataDir, "--workspace", workspace, ...args], input !== undefined ? { input } : {});
}

/** Run a cell (through the daemon) whose last line's value is printed as JSON. */
async function cell(code: string, session?: string): Promise<any> {
  const lines = code.trim().split("\n");
  const last = lines.pop()!;
  const source = ["import json as _json", ...lines, "try:", `    _v = ${last}`, "except Exception as _e:", "    _v = {'error': getattr(_e, 'code', type(_e).__name__)}", "print(_json.dumps(_v))"].join("\n");
  const run = await klbr(["exec", ...(session ? ["--session", session] : []), source]);
  if (run.code !== 0) throw new Error(`exec failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split("\n").at(-1)!);
}

/** Start `klbr serve` and wait until it serves. */
async function serve(): Promise<ChildProcess> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, "serve"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (c) => {
      stderr += c;
      if (stderr.includes("klbr: serving")) resolve();
    });
    child.once("exit", () => reject(new Error(`serve exited: ${stderr}`)));
  });
  return child;
}

/** The durable log as `klbr log --json` prints it (optionally one session's). */
async function log(session?: string): Promise<Array<Record<string, any>>> {
  const run = await klbr(["log", "--json", ...(session ? ["--session", session] : [])]);
  expect(run.code).toBe(0);
  return run.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
}

/** Poll the durable log (read-only, no daemon involved) until `check` holds; fails with the last log after `timeoutMs`. */
async function untilLog(check: (entries: Array<Record<string, any>>) => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let entries = await log(); !check(entries); entries = await log()) {
    if (Date.now() >= deadline) throw new Error(`the log never reached the awaited state within ${timeoutMs} ms: ${JSON.stringify(entries.slice(-10))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dataDir = tempDir("klbr-pe-");
  workspace = tempDir("klbr-pw-");
  daemon = await serve();
});

afterAll(async () => {
  await stopDaemon(daemon);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("peers through the CLI and the daemon", () => {
  let peer: { peer_id: string; session_id: string };

  test("exec --session runs in the peer's own workbench; status lists sessions and peers; log --session and repl --session", async () => {
    peer = await cell("await runtime.peer_open('independent')");
    expect(peer).toMatchObject({ status: "open" });
    const inPeer = await klbr(["exec", "--session", peer.session_id, "where = 'peer'\nwhere"]);
    expect(inPeer).toMatchObject({ code: 0, stdout: "'peer'\n" });
    expect((await klbr(["exec", "'where' in dir()"])).stdout).toBe("False\n");

    const status = await klbr(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^session +root root open`, "m"));
    expect(status.stdout).toMatch(new RegExp(`^session +${peer.session_id} peer open peer ${peer.peer_id} of root workbench g-1 ready`, "m"));
    expect(status.stdout).toMatch(new RegExp(`^peer +${peer.peer_id} session ${peer.session_id} of root independent open requests 0 pending`, "m"));
    const json = JSON.parse((await klbr(["status", "--json"])).stdout) as { sessions: Array<Record<string, unknown>>; peers: Array<Record<string, unknown>> };
    expect(json.sessions.map((s) => s.session_id)).toEqual(["root", peer.session_id]);
    expect(json.peers).toEqual([expect.objectContaining({ peer_id: peer.peer_id, session_id: peer.session_id, status: "open", opener_session_id: "root" })]);

    const mine = await log(peer.session_id);
    const executions = mine.filter((e) => e.kind === "execution");
    expect(executions.map((e) => e.session_id)).toEqual([peer.session_id]);
    expect(mine.some((e) => e.kind === "peer" && e.id === peer.peer_id)).toBe(true);
    expect(mine.some((e) => e.kind === "kernel.reset" && e.session_id === peer.session_id)).toBe(true);
    expect(mine.every((e) => e.session_id === peer.session_id || e.opener_session_id !== undefined || e.execution_id !== undefined)).toBe(true);
    expect((await log("root")).some((e) => e.kind === "execution" && e.session_id === peer.session_id)).toBe(false);

    const repl = await klbr(["repl", "--session", peer.session_id], "where\n:quit\n");
    expect(repl.code).toBe(0);
    expect(repl.stdout).toContain("'peer'");
    expect(repl.stderr).toContain(`session ${peer.session_id}`);

    expect((await klbr(["exec", "--session", "bad id", "1"])).code).toBe(64);
    expect((await klbr(["log", "--session", "bad id"])).code).toBe(64);
  }, 120_000);

  test("a daemon kill -9 in the middle: after the restart every peer request is consistent and nothing is answered twice", async () => {
    for (const id of ["k1", "k2", "k3"]) expect(await cell(`await runtime.peer_send(${JSON.stringify(peer.peer_id)}, '${id}', 'task ${id}')`)).toMatchObject({ status: "queued" });
    expect(await cell("await runtime.peer_submit_result('k1', {'n': 1})", peer.session_id)).toEqual({ request_id: "k1", status: "answered" });
    // A second peer is draining a running cell when the daemon dies.
    const draining = await cell("await runtime.peer_open('independent')");
    const drainingCell = klbr(["exec", "--session", draining.session_id, "import time\ntime.sleep(120)"]);
    await untilLog((l) => l.some((e) => e.kind === "execution" && e.session_id === draining.session_id && e.status === "running"));
    expect(await cell(`await runtime.peer_stop(${JSON.stringify(draining.peer_id)}, drain=True)`)).toEqual({ peer_id: draining.peer_id, status: "stopping" });

    // The peer answers k2 and then keeps running; the root waits for k3 inside a cell.
    const peerCell = klbr(["exec", "--session", peer.session_id, "await runtime.peer_submit_result('k2', {'n': 2})\nimport time\ntime.sleep(120)"]);
    const rootCell = klbr(["exec", "await runtime.peer_result('k3', wait_ms=600000)"]);
    await untilLog(
      (l) =>
        l.some((e) => e.kind === "peer_request" && e.request_id === "k2" && e.status === "answered") &&
        l.some((e) => e.kind === "request" && e.method === "peer.result" && e.reply === null),
    );
    await stopDaemon(daemon, "SIGKILL");
    await Promise.all([peerCell, rootCell, drainingCell]);
    daemon = await serve();

    const after = await log();
    const byId = (id: string) => after.filter((e) => e.kind === "peer_request" && e.request_id === id);
    expect(byId("k1")).toEqual([expect.objectContaining({ status: "answered", result: { n: 1 } })]);
    expect(byId("k2")).toEqual([expect.objectContaining({ status: "answered", result: { n: 2 } })]);
    expect(byId("k3")).toEqual([expect.objectContaining({ status: "pending", result: null })]);
    expect(after.find((e) => e.kind === "peer" && e.id === draining.peer_id)).toMatchObject({ status: "stopped", stopped_by: "host_restart" });
    // Exactly one answer input per answered request reached the opener.
    const answers = after.filter((e) => e.kind === "input" && e.session_id === "root" && e.payload?.result_of);
    expect(answers.map((e) => e.payload.result_of).sort()).toEqual(["k1", "k2"]);
    // The cells the kill cut are closed from the host's observation.
    for (const e of after.filter((e) => e.kind === "execution" && /time\.sleep\(120\)|'k3', wait_ms/.test(e.code))) {
      expect(e).toMatchObject({ status: "interrupted", ended_by: "host_restart" });
    }

    // Nothing is answered twice; what was pending can still be answered, once.
    expect(await cell("await runtime.peer_submit_result('k2', {'n': 22})", peer.session_id)).toEqual({ error: "conflict" });
    expect(await cell("await runtime.peer_submit_result('k3', {'n': 3})", peer.session_id)).toEqual({ request_id: "k3", status: "answered" });
    expect(await cell("await runtime.peer_submit_result('k3', {'n': 33})", peer.session_id)).toEqual({ error: "conflict" });
    expect(await cell("[await runtime.peer_result(r) for r in ('k1', 'k2', 'k3')]")).toEqual([
      { request_id: "k1", status: "answered", result: { n: 1 } },
      { request_id: "k2", status: "answered", result: { n: 2 } },
      { request_id: "k3", status: "answered", result: { n: 3 } },
    ]);
    expect(await cell(`await runtime.peer_get(${JSON.stringify(peer.peer_id)})`)).toMatchObject({ status: "open", requests: { pending: 0, answered: 3, cancelled: 0 } });
    // The stopped peer stays stopped: no cell runs there, sends are refused.
    const refused = await klbr(["exec", "--session", draining.session_id, "1"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("SESSION_STOPPED");
    expect(await cell(`await runtime.peer_send(${JSON.stringify(draining.peer_id)}, 'k4', 'no')`)).toEqual({ error: "conflict" });
    // The peer's namespace did not survive the kill; its session did (a new generation).
    expect(await cell("(await runtime.inspect())['generation']", peer.session_id)).toBe("g-2");
  }, 180_000);
});
