// `klbr mcp` over stdio driven by the Python MCP SDK (`mcp` from PyPI): its ClientSession, from
// the venv .ci/setup-mcp-python.sh builds and caches (CI runs it; without it this test fails, never skips).
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, test } from "vitest";
import { HOST_DIR } from "./cli-run";
import { removeTree, tempDir } from "./helpers";
import { mcpArgv, stopDaemonOf, type McpDirs } from "./mcp/support";

/** Where .ci/setup-mcp-python.sh leaves python.json (KLBR_MCP_PYTHON_CACHE moves it, as it moves the script's cache). */
const PYTHON_JSON = join(process.env.KLBR_MCP_PYTHON_CACHE ?? join(homedir(), ".cache", "klbr-ci", "mcp"), "python.json");

let dirs: McpDirs;
beforeAll(() => {
  dirs = { dataDir: tempDir("klbr-mcpp-"), workspace: tempDir("klbr-mcppw-") };
});
afterAll(async () => {
  await stopDaemonOf(dirs.dataDir);
  removeTree(dirs.dataDir);
  removeTree(dirs.workspace);
});

test("the Python SDK's ClientSession: tools, a namespace across calls, progress, bad calls, a cancel", async () => {
  if (!existsSync(PYTHON_JSON)) throw new Error(`no Python MCP SDK venv (${PYTHON_JSON}): run .ci/setup-mcp-python.sh first`);
  const { python, version } = JSON.parse(readFileSync(PYTHON_JSON, "utf8")) as { python: string; version: string };
  const { stdout } = await promisify(execFile)(python, [join(HOST_DIR, "test", "mcp", "python_client.py"), JSON.stringify(mcpArgv(dirs))], { cwd: HOST_DIR, timeout: 120_000, maxBuffer: 16 << 20 });
  const seen = JSON.parse(stdout.trim().split("\n").at(-1)!);
  expect(version).toBe("2.3.0");
  expect(seen.server).toBe("klbr");
  expect(seen.tools).toEqual(["python", "sessions", "session_log"]);
  expect(seen.python_schema.required).toEqual(["code"]);
  expect(seen.x_plus_1).toEqual({ text: expect.stringMatching(/ · ran \d+ms\]\n42\n$/), is_error: false, first_is_error: false });
  expect(seen.failed.is_error).toBe(true);
  expect(seen.failed.text).toContain("ZeroDivisionError");
  // Progress before the result: the first print is seen while the cell still sleeps.
  expect(seen.progress.notes.map((n: { message: string }) => n.message)).toEqual(["first\n", "second\n"]);
  expect(seen.progress.result_at - seen.progress.notes[0].at).toBeGreaterThanOrEqual(0.4);
  expect(seen.progress.text).toContain("first\nsecond\n");
  expect(seen.errors.unknown_tool).toMatchObject({ code: -32602, message: expect.stringContaining("MCP_UNKNOWN_TOOL") });
  expect(seen.errors.missing_code).toMatchObject({ code: -32602, message: expect.stringContaining("MCP_INVALID_ARGUMENTS") });
  expect(seen.errors.oversized).toMatchObject({ code: -32602, message: expect.stringContaining("CELL_TOO_LARGE") });
  // The cancelled busy loop was interrupted (the next call ran in the same namespace), its rung recorded.
  expect(seen.after_cancel).toEqual({ text: expect.stringMatching(/\n41\n$/), is_error: false });
  const loop = seen.log.records.find((r: { kind: string; code?: string }) => r.kind === "execution" && r.code === "while True: pass");
  expect(loop).toMatchObject({ status: "interrupted", ended_by: expect.any(String) });
}, 180_000);
