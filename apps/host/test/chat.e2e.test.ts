// `klbr route add` + `klbr chat` against the scripted server, end to end through the real CLI:
// embedded, through a daemon that drives the session, and a daemon killed mid-cell (kill -9)
// whose successor resumes from the log without running the cell again.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { klbrRun, type Run } from "./cli-run";
import { tempDir } from "./helpers";
import { spawnServe, stopDaemon } from "./processes";

let dataDir: string;
let workspace: string;
let server: ScriptedServer;
const daemons: ChildProcess[] = [];

function klbr(args: string[], input = "", env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return klbrRun(["--data-dir", dataDir, "--workspace", workspace, ...args], { input, env: { ...process.env, ...env } });
}

async function serve(): Promise<{ child: ChildProcess; stderr: () => string }> {
  const daemon = spawnServe(["--data-dir", dataDir, "--workspace", workspace, "serve"]);
  daemons.push(daemon.child);
  await daemon.ready;
  return daemon;
}

beforeAll(async () => {
  // (the daemon-killed test below wakes its session with `klbr say` through the daemon)
  dataDir = tempDir("klbr-c-");
  workspace = tempDir("klbr-cw-");
  server = await startScriptedServer();
});

afterAll(async () => {
  for (const d of daemons) await stopDaemon(d);
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

// Each CLI run starts node + tsx; on a loaded 2-core box that alone takes seconds.
describe("klbr route + klbr chat", { timeout: 120_000 }, () => {
  test("route add, list and test print the route and the usage record", async () => {
    const add = await klbr(["route", "add", "scripted", "--api", "chat", "--base-url", `${server.url}/v1`, "--model", "scripted-1", "--context-tokens", "100000", "-o", "temperature=0"]);
    expect(add).toMatchObject({ code: 0, stdout: "route scripted saved (default); a running daemon uses it after a restart\n" });
    const list = await klbr(["route", "list"]);
    expect(list.stdout).toContain(`* scripted  chat  scripted-1  ${server.url}/v1  no key  context 100000  cells tool`);
    server.push({ text: "ok" });
    const t = await klbr(["route", "test", "scripted"]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain('reply: "ok"');
    expect(t.stdout).toMatch(/usage: \{"shape":"openai_chat","prompt_tokens":\d+,"completion_tokens":1,"cached_prompt_tokens":\d+/);
    expect(JSON.parse(server.requests.at(-1)!.body)).toMatchObject({ model: "scripted-1", temperature: 0, stream: true });
  });

  test("chat with an embedded host: streamed text, a cell and its result, usage, turn ends", async () => {
    server.push({ text: "Hi! How can I help?" }, { text: "Computing.", calls: [{ code: "6 * 7" }] }, { text: "It is 42." });
    const r = await klbr(["chat"], "hello\nwhat is six times seven?\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Hi! How can I help?\n");
    expect(r.stdout).toMatch(/\[turn ended: model_ended_turn\]\n[\s\S]*Computing\.\n  · prompt \d+, cached \d+ \(\d+\.\d%\), completion \d+\n\[cell ex-\S+\]\n```python\n6 \* 7\n```\n\[[^\]]+ · ran [^\]]+\]\n42\n[\s\S]*It is 42\.\n/);
    expect((r.stdout.match(/\[turn ended: model_ended_turn\]/g) ?? []).length).toBe(2);
    const log = await klbr(["log"]);
    expect(log.stdout.match(/model\.request \S+ session=root route=scripted model="scripted-1" status=ok retries=0 body_bytes=\d+ shared_prefix_bytes=\d+ prompt_tokens=\d+ cached_prompt_tokens=\d+ completion_tokens=\d+ cached=\d+\.\d%/g)).toHaveLength(3);
  });

  test("chat through a daemon that drives the session (a reviewed send reaches the chat)", async () => {
    const daemon = await serve();
    expect(daemon.stderr()).toContain("sessions driven by route scripted (scripted-1)");
    server.push({ text: "Still here.", calls: [{ code: "await runtime.send('a note for the operator')" }] }, { text: "Sent you a note." });
    const r = await klbr(["chat"], "are you there?\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[to operator] a note for the operator\n");
    expect(r.stdout).toContain("Sent you a note.\n");
    expect((await klbr(["status"])).stdout).toContain("model      sessions driven by route scripted (chat, scripted-1)\n");
    await stopDaemon(daemon.child);
  });

  test("a daemon killed mid-cell: the next one resumes from the log, tells the model, and runs nothing twice", async () => {
    const marker = join(workspace, "long-cell-runs");
    const daemon = await serve();
    server.push({ text: "Starting a long job.", calls: [{ code: `open(${JSON.stringify(marker)}, "a").write("run\\n")\nimport time\ntime.sleep(120)` }] });
    const before = server.requests.length;
    expect((await klbr(["say", "run the long job"])).code).toBe(0);
    while (!existsSync(marker)) await new Promise((r) => setTimeout(r, 50));
    await stopDaemon(daemon.child, "SIGKILL");
    server.push({ text: "The job was interrupted by a restart." });
    const next = await serve();
    const deadline = Date.now() + 30_000;
    while (server.requests.length < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const resumed = JSON.parse(server.requests[before + 1]!.body) as { messages: Array<{ role: string; content: string }> };
    expect(resumed.messages.at(-1)).toMatchObject({ role: "tool", content: expect.stringContaining("[status: interrupted (host_restart)]") });
    expect(readFileSync(marker, "utf8")).toBe("run\n");
    await stopDaemon(next.child);
  });

  test("a route whose key variable is unset: a clear error at start", async () => {
    expect((await klbr(["route", "add", "keyed", "--api", "chat", "--base-url", `${server.url}/v1`, "--model", "m", "--key-env", "KLBR_E2E_UNSET_KEY"])).code).toBe(0);
    const r = await klbr(["chat", "--route", "keyed"], "hi\n", { KLBR_E2E_UNSET_KEY: "" });
    expect(r.code).toBe(69);
    expect(r.stderr).toContain("klbr: DRIVER_KEY_UNSET: route \"keyed\" reads its key from $KLBR_E2E_UNSET_KEY, which is not set");
    const s = await klbr(["serve", "--route", "keyed"], "", { KLBR_E2E_UNSET_KEY: "" });
    expect(s.code).toBe(69);
    expect(s.stderr).toContain("DRIVER_KEY_UNSET");
  });
});
