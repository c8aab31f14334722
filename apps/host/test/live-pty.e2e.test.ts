// `klbr repl` and `klbr chat` at a terminal (Python's pty module at the keyboard) against a
// `klbr serve` daemon that streams live output (C16): a running cell's output shows under it while
// it runs. Each cell waits for a file the pty driver creates only after the cell's first line was
// on the screen, so a line that shows only from the completion record never unblocks it.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolvePython } from "@klbr/supervisor";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { CLI, HOST_DIR } from "./cli-run";
import { tempDir } from "./helpers";
import { stopDaemon } from "./processes";

const DRIVER = join(HOST_DIR, "test", "pty-drive.py");
const CTRL_D = "\u0004";

type Step = { expect: string } | { send: string } | { wait_file: string } | { touch: string };
interface Drive {
  status: number | null;
  output: string;
  failed: unknown;
}

let dataDir: string;
let workspace: string;
let server: ScriptedServer;
let daemon: ChildProcess | null = null;

const common = () => ["--data-dir", dataDir, "--workspace", workspace];

/** Run `klbr ARGS` in a pty through the steps; the result says how it ended and all it printed. */
function inPty(args: string[], steps: Step[]): Promise<Drive> {
  const plan = { argv: [...CLI, ...common(), ...args], cwd: HOST_DIR, env: { ...process.env, TERM: "xterm" }, steps, timeout_s: 120 };
  return new Promise((resolve, reject) =>
    execFile(resolvePython(), [DRIVER, JSON.stringify(plan)], { maxBuffer: 16 << 20 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout) as Drive))),
  );
}

/**
 * A one-line cell: prints a line, waits for `gate`, prints another. The printed words are joined
 * at run time, so the terminal's echo of the typed cell never matches what the test expects.
 */
function gatedCell(gate: string): string {
  return `import os, time; print('live' + ' first'); [time.sleep(0.005) for _ in iter(lambda: os.path.exists(${JSON.stringify(gate)}), True)]; print('live' + ' second')`;
}

async function serve(): Promise<ChildProcess> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...common(), "serve"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", () => stderr.includes("klbr: serving") && resolve());
    child.once("exit", () => reject(new Error(`serve did not start: ${stderr}`)));
  });
  return child;
}

beforeAll(async () => {
  dataDir = tempDir("klbr-lp-");
  workspace = tempDir("klbr-lpw-");
  server = await startScriptedServer();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 100_000 }] }),
  );
  daemon = await serve();
}, 180_000);

afterAll(async () => {
  await stopDaemon(daemon);
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
}, 180_000);

describe("live output at a terminal", { timeout: 400_000 }, () => {
  test("klbr repl shows a running cell's output under it, then the prompt when it ends", async () => {
    const gate = join(workspace, "repl-gate");
    const r = await inPty(["repl"], [
      { expect: "klbr> " },
      { send: `${gatedCell(gate)}\r` },
      { expect: "live first\\r?\\n" },
      { touch: gate },
      { expect: "live second\\r?\\n" },
      { expect: "klbr> " },
      { send: CTRL_D },
    ]);
    expect(r.failed, r.output).toBeNull();
    expect(r.status, r.output).toBe(0);
    const typed = r.output.indexOf("print('live' + ' first')");
    const first = r.output.indexOf("live first");
    expect(typed).toBeGreaterThan(-1);
    expect(first).toBeGreaterThan(typed); // under the cell, once
    expect(r.output.indexOf("live first", first + 1)).toBe(-1); // not printed again from the record
    expect(r.output.indexOf("live second")).toBeGreaterThan(first);
  });

  test("klbr chat shows the model's running cell's output as │ lines under the cell", async () => {
    const gate = join(workspace, "chat-gate");
    server.push({ text: "Running it.", calls: [{ code: gatedCell(gate).replaceAll("; ", "\n") }] }, { text: "It ran." });
    const r = await inPty(["chat"], [
      { expect: "> " },
      { send: "run the cell\r" },
      { expect: "│ live first\\r?\\n" },
      { touch: gate },
      { expect: "│ live second\\r?\\n" },
      { expect: "\\[turn ended: model_ended_turn\\]" },
      { send: CTRL_D },
    ]);
    expect(r.failed, r.output).toBeNull();
    expect(r.status, r.output).toBe(0);
    const cell = r.output.indexOf("```python");
    const first = r.output.indexOf("│ live first");
    expect(cell).toBeGreaterThan(-1);
    expect(first).toBeGreaterThan(cell);
    expect(r.output.indexOf("It ran.")).toBeGreaterThan(r.output.indexOf("│ live second"));
  });
});
