// C21 failover of a driven session (scripted route): the holder is killed (-9) in the middle of a
// model turn's cell; another host on the same log takes the session over unasked and finishes
// the turn: the model reads the lost cell as failed `host_lost`, and its next cell's result says
// the namespace is gone (`host_failover`). Nothing committed is written twice.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { klbrRun } from "./cli-run";
import { alive, HostGroup, LOG_KINDS, within } from "./hosts-support";

const LEASE_MS = 2_000;
let server: ScriptedServer;

beforeAll(async () => {
  server = await startScriptedServer();
});

afterAll(async () => {
  await server?.close();
});

type Message = { role: string; content: string };
const lastMessage = (i: number) => (JSON.parse(server.requests[i]!.body) as { messages: Message[] }).messages.at(-1)!;

describe.each(LOG_KINDS)("on %s", (kind) => {
  let group: HostGroup;

  beforeAll(async () => {
    group = new HostGroup(["--lease", "2s"], async (dataDir) => {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      const add = await klbrRun(["--data-dir", dataDir, "route", "add", "scripted", "--api", "chat", "--base-url", `${server.url}/v1`, "--model", "scripted-1", "--context-tokens", "100000"]);
      if (add.code !== 0) throw new Error(add.stderr);
    }, kind);
  });

  afterAll(async () => {
    await group?.close();
  });

  test("kill -9 of the holder mid-turn: another host finishes the turn within lease + 3 s; the model reads host_lost, then the namespace gone", async () => {
    const a = await group.start();
    const b = await group.start();
    const marker = join(group.root, "turn-cell-runs");
    server.push(
      { text: "Starting a long job.", calls: [{ code: `x = 41\nopen(${JSON.stringify(marker)}, "a").write("run\\n")\nimport time\ntime.sleep(600)` }] },
      { text: "Checking the namespace.", calls: [{ code: "print(x + 1)" }] },
      { text: "Done." },
    );
    const before = server.requests.length;
    expect((await klbrRun(["--data-dir", a.dataDir, "say", "run the long job"])).code).toBe(0);
    expect(await within(30_000, () => existsSync(marker))).toBe(true);
    const bench = ((await group.status(a)).workbenches as Array<{ session_id: string; pid: number }>).find((w) => w.session_id === "root")!.pid;
    const killed = Date.now();
    a.child.kill("SIGKILL");
    await a.exited;
    // B takes the session over by itself (a running cell is pending work) and asks the model again.
    expect(await within(LEASE_MS + 3_000, () => server.requests.length >= before + 2), `no request from the new holder within ${LEASE_MS + 3_000} ms`).toBe(true);
    expect(Date.now() - killed).toBeLessThan(LEASE_MS + 3_000);
    expect(lastMessage(before + 1)).toMatchObject({ role: "tool", content: expect.stringContaining("host_lost") });
    expect(await within(30_000, () => server.requests.length >= before + 3)).toBe(true);
    // The next cell ran in a new generation on B: x is gone, and the result says why.
    const third = lastMessage(before + 2);
    expect(third).toMatchObject({ role: "tool", content: expect.stringContaining("namespace lost (host_failover)") });
    expect(third.content).toContain("NameError");
    expect(readFileSync(marker, "utf8")).toBe("run\n");
    expect(await within(5_000, () => !alive(bench))).toBe(true);
    // Every committed record once: one request row per model call, one execution per cell.
    const counts = {
      requests: (await group.one<{ n: number }>("SELECT count(*) AS n FROM model_requests WHERE session_id = 'root'"))!.n,
      cells: (await group.one<{ n: number }>("SELECT count(*) AS n FROM transcript_records WHERE session_id = 'root' AND kind = 'cell'"))!.n,
      executions: await group.all("SELECT status, error FROM executions WHERE session_id = 'root' AND code NOT LIKE 'import%' ORDER BY started_at_ms"),
    };
    expect(counts.requests).toBe(3);
    expect(counts.cells).toBe(2);
    expect(counts.executions).toEqual([
      { status: "failed", error: "host_lost" },
      { status: "error", error: expect.stringContaining("NameError") },
    ]);
    expect(b.stderr()).toContain("session root: taken over from host");
  }, 120_000);
});
