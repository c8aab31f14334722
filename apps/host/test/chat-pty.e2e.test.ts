// `klbr chat` in a pseudo-terminal (Python's pty module at the keyboard) against the scripted
// server: Ctrl-C stops the agent's turn instead of quitting (issue 19 item 13).
import { execFile } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolvePython } from "@klbr/supervisor";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { tempDir } from "./helpers";
import { CLI, HOST_DIR } from "./cli-run";

const DRIVER = join(HOST_DIR, "test", "pty-drive.py");
const CTRL_C = "\u0003";
const CTRL_D = "\u0004";

type Step = { expect: string } | { send: string } | { wait_file: string };
interface Drive {
  status: number | null;
  signal: number | null;
  output: string;
  failed: unknown;
}

let dataDir: string;
let workspace: string;
let server: ScriptedServer;
let releaseGate: () => void = () => undefined;

/** Run `klbr chat` in a pty through the steps; the result says how it ended and all it printed. */
function chatInPty(steps: Step[]): Promise<Drive> {
  const plan = { argv: [...CLI, "--data-dir", dataDir, "--workspace", workspace, "chat"], cwd: HOST_DIR, env: { ...process.env, TERM: "xterm" }, steps, timeout_s: 90 };
  return new Promise((resolve, reject) =>
    execFile(resolvePython(), [DRIVER, JSON.stringify(plan)], { maxBuffer: 16 << 20 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Drive))),
  );
}

/** A file that appears once the server has received `n` requests: the pty side waits on it. */
function whenRequests(n: number): string {
  const file = join(workspace, `requests-${n}`);
  const poll = setInterval(() => {
    if (server.requests.length >= n) {
      writeFileSync(file, "");
      clearInterval(poll);
    }
  }, 20);
  return file;
}

function query<T>(sql: string): T[] {
  const db = new Database(join(dataDir, "klbr.sqlite"), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  dataDir = tempDir("klbr-pc-");
  workspace = tempDir("klbr-pw-");
  server = await startScriptedServer();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 100_000 }] }),
  );
});

afterAll(async () => {
  releaseGate();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("klbr chat at a terminal: Ctrl-C stops the agent, not the chat", { timeout: 300_000 }, () => {
  test("Ctrl-C aborts the route call and interrupts a running cell; the turn ends operator_interrupted, the model reads it; a queued line goes out after; Ctrl-C twice leaves with 130", async () => {
    const marker = join(workspace, "long-cell-started");
    // 1: a reply that never comes until the call is abandoned; 2: the answer to the queued line; 3: a long cell.
    server.push(
      { text: "never sent", gate: new Promise<void>((resolve) => (releaseGate = resolve)) },
      { text: "Stopped. About the next thing." },
      { text: "Starting.", calls: [{ code: `open(${JSON.stringify(marker)}, "w").write("x")\nimport time\ntime.sleep(120)` }] },
    );
    const first = whenRequests(1);
    const r = await chatInPty([
      { expect: "chatting with scripted" },
      { expect: "> " },
      { send: "hello\r" },
      { wait_file: first },
      { send: "and then this\r" },
      { expect: "\\[queued\\] and then this" },
      { send: CTRL_C },
      { expect: "\\[turn ended: operator_interrupted\\]" },
      { expect: "Stopped\\. About the next thing\\." },
      { expect: "\\[turn ended: model_ended_turn\\]" },
      { send: "run the long one\r" },
      { wait_file: marker },
      { send: CTRL_C },
      { expect: "\\[status: interrupted" },
      { expect: "\\[turn ended: operator_interrupted\\]" },
      { expect: "> " },
      { send: CTRL_C + CTRL_C },
    ]);
    expect(r.failed, r.output).toBeNull();
    expect(r.status, r.output).toBe(130);
    // The abandoned call is closed, not failed; the model's next request reads why its turn ended, then the queued line.
    expect(server.requests).toHaveLength(3);
    const second = (JSON.parse(server.requests[1]!.body) as { messages: Array<{ role: string; content: string }> }).messages;
    const at = second.findIndex((m) => /^\[[^\]]+ · turn ended: operator_interrupted\]\n/.test(m.content));
    expect(at).toBeGreaterThan(0);
    expect(second[at]!.role).toBe("user");
    expect(second[at + 1]).toMatchObject({ role: "user", content: expect.stringMatching(/· operator\]\nand then this$/) });
    const requests = query<{ status: string; error: string | null }>("SELECT status, error FROM model_requests ORDER BY started_at_ms, id");
    expect(requests[0]).toMatchObject({ status: "error", error: expect.stringContaining("OPERATOR_INTERRUPTED") });
    expect(query<{ reason: string }>("SELECT reason FROM waits ORDER BY created_at_ms, id").map((w) => w.reason)).toEqual(["operator_interrupted", "model_ended_turn", "operator_interrupted"]);
    // The cell went down the interrupt ladder (not a host shutdown): the chat was still there.
    expect(query<{ status: string; ended_by: string }>("SELECT status, ended_by FROM executions")).toEqual([{ status: "interrupted", ended_by: expect.stringMatching(/^(message|sigint|sigkill)$/) }]);
    expect(query<{ kind: string }>("SELECT kind FROM incidents").map((i) => i.kind)).not.toContain("model.route_failed");
  });

  test("the stopped turn does not resume at the next start; Ctrl-C with no turn says how to leave, Ctrl-D leaves with 0", async () => {
    const before = server.requests.length;
    const r = await chatInPty([{ expect: "> " }, { send: CTRL_C }, { expect: "\\(Ctrl-C again within 2 s, or Ctrl-D, leaves\\)" }, { send: CTRL_D }]);
    expect(r.failed, r.output).toBeNull();
    expect(r.status, r.output).toBe(0);
    expect(server.requests).toHaveLength(before);
    expect(existsSync(join(dataDir, "klbr.sqlite"))).toBe(true);
  });
});
