// `klbr mcp` driven by the Python MCP SDK (`mcp` from PyPI): its ClientSession over stdio and over
// Streamable HTTP, from the venv .ci/setup-mcp-python.sh builds and caches (CI runs it; without it
// this test fails, never skips). The same cases for both transports, down to the daemon SIGKILLed
// mid-call.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { daemonLogFile } from "../src/mcp/daemon";
import { HOST_DIR } from "./cli-run";
import { removeTree, tempDir } from "./helpers";
import { daemonPid, httpServer, mcpArgv, stopDaemonOf, type McpDirs } from "./mcp/support";

/** Where .ci/setup-mcp-python.sh leaves python.json (KLBR_MCP_PYTHON_CACHE moves it, as it moves the script's cache). */
const PYTHON_JSON = join(process.env.KLBR_MCP_PYTHON_CACHE ?? join(homedir(), ".cache", "klbr-ci", "mcp"), "python.json");

/** Run test/mcp/python_client.py against `target`; what it saw. */
async function drive(target: unknown, dataDir: string): Promise<Record<string, any>> {
  if (!existsSync(PYTHON_JSON)) throw new Error(`no Python MCP SDK venv (${PYTHON_JSON}): run .ci/setup-mcp-python.sh first`);
  const { python, version } = JSON.parse(readFileSync(PYTHON_JSON, "utf8")) as { python: string; version: string };
  expect(version).toBe("2.3.0");
  const { stdout } = await promisify(execFile)(python, [join(HOST_DIR, "test", "mcp", "python_client.py"), JSON.stringify(target), dataDir], { cwd: HOST_DIR, timeout: 150_000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

/** The log of the daemons `klbr mcp` started in `dataDir` (its last 4 KiB), for a failure message. */
function daemonLog(dataDir: string): string {
  const file = daemonLogFile(dataDir);
  return existsSync(file) ? `mcp-serve.log:\n${readFileSync(file, "utf8").slice(-4096)}` : "(no mcp-serve.log)";
}

/** The cases C22 and issue 40 list, as the Python client saw them (the same for either transport). */
function expectTheCases(seen: Record<string, any>, dataDir: string): void {
  expect(seen.server).toBe("klbr");
  expect(seen.tools).toEqual(["python", "sessions", "session_log"]);
  expect(seen.python_schema.required).toEqual(["code"]);
  expect(seen.x_plus_1).toEqual({ text: expect.stringMatching(/ · ran \d+ms\]\n42\n$/), is_error: false, first_is_error: false });
  expect(seen.plot).toEqual({ is_error: false, first: "text", images: [{ mime: "image/png", magic: "PNG" }] });
  expect(seen.failed.is_error).toBe(true);
  expect(seen.failed.text).toContain("ZeroDivisionError");
  // Progress before the result: the cell went on only once the client had seen its first print
  // (test/mcp/python_client.py). How the worker cuts the output into messages is its pacing's (C16).
  expect((seen.progress.notes as Array<{ message: string }>).map((n) => n.message).join("")).toBe("first\nsecond\n");
  expect(seen.progress.text).toContain("first\nsecond\n");
  expect(seen.errors.unknown_tool).toMatchObject({ code: -32602, message: expect.stringContaining("MCP_UNKNOWN_TOOL") });
  expect(seen.errors.missing_code).toMatchObject({ code: -32602, message: expect.stringContaining("MCP_INVALID_ARGUMENTS") });
  expect(seen.errors.oversized).toMatchObject({ code: -32602, message: expect.stringContaining("CELL_TOO_LARGE") });
  // The cancelled busy loop was interrupted (the next call ran in the same namespace), its rung recorded.
  expect(seen.after_cancel).toEqual({ text: expect.stringMatching(/\n41\n$/), is_error: false });
  const loop = seen.log.records.find((r: { kind: string; code?: string }) => r.kind === "execution" && r.code === "while True: pass");
  expect(loop).toMatchObject({ status: "interrupted", ended_by: expect.any(String), origin: "mcp" });
  // The daemon SIGKILLed mid-call: an error result naming it, then the next call starts another.
  expect(seen.killed.during).toEqual({ text: expect.stringContaining("HOST_NOT_RUNNING"), is_error: true });
  // On failure, what the daemons `klbr mcp` started wrote (the one killed and the next).
  expect(seen.killed.after, daemonLog(dataDir)).toEqual({ text: expect.stringMatching(/\n42\n$/), is_error: false });
  expect(seen.killed.new_daemon).toBe(true);
}

describe("the Python SDK's ClientSession", () => {
  let dirs: McpDirs;
  let server: Awaited<ReturnType<typeof httpServer>> | undefined;
  beforeAll(() => {
    dirs = { dataDir: tempDir("klbr-mcpp-"), workspace: tempDir("klbr-mcppw-") };
  });
  afterAll(async () => {
    await server?.stop();
    await stopDaemonOf(dirs.dataDir);
    removeTree(dirs.dataDir);
    removeTree(dirs.workspace);
  });

  test("over stdio: tools, a namespace across calls, a plot, progress, bad calls, a cancel, the daemon killed", async () => {
    expectTheCases(await drive({ stdio: mcpArgv(dirs) }, dirs.dataDir), dirs.dataDir);
  }, 180_000);

  test("over Streamable HTTP: the same cases, and no token is refused", async () => {
    server = await httpServer(dirs);
    const token = /token (\S+)/.exec(server.stdout())![1]!;
    const seen = await drive({ http: server.url, token }, dirs.dataDir);
    // The SDK's initialize fails; the status it does not show is 401 with a Bearer challenge.
    expect(seen.unauthorized).toEqual({ sdk: expect.stringContaining("MCPError"), status: 401, www_authenticate: expect.stringMatching(/^Bearer/) });
    expectTheCases(seen, dirs.dataDir);
    expect(daemonPid(dirs.dataDir)).not.toBeNull();
  }, 180_000);
});
