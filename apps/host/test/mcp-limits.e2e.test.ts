// C22: limits, the sandbox and accounting apply to an MCP call as to any cell. The daemon `klbr
// mcp` starts is a plain `klbr serve` with the client's environment, so KLBR_LIMITS and
// KLBR_SANDBOX given to the MCP server's process bind its cells (as an MCP client's "env" would).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { MEMORY_BOMB } from "../../../test-support/limits.ts";
import { HOST_DIR } from "./cli-run";
import { removeTree, tempDir } from "./helpers";
import { executions, mcpArgv, sessionOf, stopDaemonOf, textOf, type McpDirs } from "./mcp/support";
import { bwrapAvailable } from "./sandbox-support";

// In CI bwrap must work (bwrapAvailable throws there otherwise); elsewhere the sandbox part is left out.
const HAS_BWRAP = bwrapAvailable();

let dirs: McpDirs;
let client: Client;

beforeAll(async () => {
  dirs = { dataDir: tempDir("klbr-mcpl-"), workspace: tempDir("klbr-mcplw-") };
  const [command, ...args] = mcpArgv(dirs);
  const env = { ...(process.env as Record<string, string>), KLBR_LIMITS: "memory=64MiB", ...(HAS_BWRAP ? { KLBR_SANDBOX: "bwrap" } : {}) };
  client = new Client({ name: "klbr-test-limits", version: "0.0.0" });
  await client.connect(new StdioClientTransport({ command: command!, args, cwd: HOST_DIR, env, stderr: "ignore" }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stopDaemonOf(dirs.dataDir);
  removeTree(dirs.dataDir);
  removeTree(dirs.workspace);
});

describe("klbr mcp with KLBR_LIMITS=memory=64MiB (and KLBR_SANDBOX=bwrap where bwrap runs)", () => {
  test("the cell's workbench has the limit and the sandbox: runtime.inspect says so", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "i = await runtime.inspect()\n(i['limits']['limits'], i['sandbox']['mode'])" } });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toMatch(new RegExp(`\\('memory=64MiB', '${HAS_BWRAP ? "bwrap" : "none"}'\\)\\n$`));
  }, 120_000);

  test("a cell over the memory limit is an error result naming it; the next call runs in a fresh namespace", async () => {
    await client.callTool({ name: "python", arguments: { code: "kept = 1" } });
    const bomb = await client.callTool({ name: "python", arguments: { code: MEMORY_BOMB } });
    expect(bomb.isError).toBe(true);
    expect(textOf(bomb)).toContain("memory_limit");
    const after = await client.callTool({ name: "python", arguments: { code: "'kept' in globals(), 6 * 7" } });
    expect(after.isError).toBe(false);
    expect(textOf(after)).toMatch(/\(False, 42\)\n$/);
    // Recorded as any cell ended by a limit, with the tree's accounting (C17), origin mcp.
    const record = (await executions(client, sessionOf(after))).find((r) => r.code === MEMORY_BOMB);
    expect(record).toMatchObject({ origin: "mcp", status: "failed" });
    expect(typeof record!.cpu_ms).toBe("number");
  }, 120_000);
});
