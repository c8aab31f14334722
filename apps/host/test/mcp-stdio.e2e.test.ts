// `klbr mcp` over stdio (C22), driven by the TypeScript SDK's own Client, against a real daemon
// (started by the first `klbr mcp`) and real Python workbenches.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { removeTree, tempDir } from "./helpers";
import { daemonPid, eventually, executions, expectRecoveryFromKilledDaemon, printsThenAwaitsClient, sessionOf, stdioClient, stopDaemonOf, textOf, type McpDirs } from "./mcp/support";

let dirs: McpDirs;
const clients: Array<{ close: () => Promise<void> }> = [];

async function open(): Promise<Client> {
  const { client } = await stdioClient(dirs);
  clients.push(client);
  return client;
}

beforeAll(() => {
  dirs = { dataDir: tempDir("klbr-mcp-"), workspace: tempDir("klbr-mcpw-") };
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await stopDaemonOf(dirs.dataDir);
  removeTree(dirs.dataDir);
  removeTree(dirs.workspace);
});

/** The MCP error a call is refused with. */
async function refusal(call: Promise<unknown>): Promise<McpError> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe("klbr mcp over stdio, the TS SDK client", () => {
  let client: Client;
  beforeAll(async () => {
    client = await open();
  }, 120_000);

  test("lists the three tools with their JSON schemas, and starts a daemon when none runs", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["python", "sessions", "session_log"]);
    const python = tools.find((t) => t.name === "python")!;
    expect(python.inputSchema.required).toEqual(["code"]);
    expect(Object.keys(python.inputSchema.properties!)).toEqual(["code", "session", "timeout_s"]);
    expect(client.getServerVersion()?.name).toBe("klbr");
    // The first call starts `klbr serve` for the data directory; it outlives this client.
    await client.callTool({ name: "python", arguments: { code: "pass" } });
    expect(daemonPid(dirs.dataDir)).not.toBeNull();
  }, 120_000);

  test("x = 41 then x + 1 is 42 across two calls: the framed result a model reads", async () => {
    const first = await client.callTool({ name: "python", arguments: { code: "x = 41" } });
    expect(first.isError).toBe(false);
    const second = await client.callTool({ name: "python", arguments: { code: "x + 1" } });
    expect(second.isError).toBe(false);
    expect(textOf(second)).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · ran \d+ms\]\n42\n$/);
  });

  test("a matplotlib plot comes back as image content: the stored PNG, 640x480", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.title('klbr')\nplt.show()" } });
    expect(result.isError).toBe(false);
    const images = (result.content as Array<{ type: string; data?: string; mimeType?: string }>).filter((c) => c.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]!.mimeType).toBe("image/png");
    const png = Buffer.from(images[0]!.data!, "base64");
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    // IHDR: width and height, big-endian, at bytes 16 and 20.
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([640, 480]);
    // The text a model reads comes first, framed.
    expect((result.content as Array<{ type: string }>)[0]!.type).toBe("text");
  }, 60_000);

  test("a display without an image is text content", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "class Shown:\n    def _repr_markdown_(self):\n        return '**bold**'\ndisplay(Shown())" } });
    expect(result.isError).toBe(false);
    const texts = (result.content as Array<{ type: string; text?: string }>).filter((c) => c.type === "text").map((c) => c.text);
    expect(texts.slice(1)).toEqual(["**bold**"]);
  });

  test("every call is an execution with origin mcp in the durable log", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "'origin?'" } });
    const id = (result._meta as Record<string, { execution_id: string }> | undefined)?.["klbr/execution"]?.execution_id;
    expect(id).toMatch(/^ex-mcp-/);
    const record = (await executions(client, sessionOf(result))).find((r) => r.id === id);
    expect(record).toMatchObject({ origin: "mcp", status: "ok" });
  });

  test("a failed cell is isError with its traceback and status", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "1 / 0" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("ZeroDivisionError: division by zero");
    expect(textOf(result)).toContain("[status: error");
  });

  test("live output arrives as progress notifications before the result", async () => {
    const notes: string[] = [];
    const marker = join(dirs.workspace, "progress-seen");
    const result = await client.callTool({ name: "python", arguments: { code: printsThenAwaitsClient(marker) } }, undefined, {
      onprogress: (p) => {
        notes.push(p.message ?? "");
        if (notes.join("").includes("first")) writeFileSync(marker, "");
      },
    });
    // (The server holds the result back a moment after its last notification, so the SDK client,
    // which drops a call's progress handler as soon as it reads the response, gets every one.)
    // (How the worker cuts output into messages is its pacing's, C16: a print's pieces may come apart.)
    expect(notes.join("")).toBe("first\nsecond\n");
    // The cell went on only once the client had seen its first print: seen while it still ran.
    expect(textOf(result)).toContain("first\nsecond\n");
  }, 60_000);

  test("no progress token, no notifications: the output is in the result alone", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "print('quiet')" } });
    expect(textOf(result)).toContain("quiet\n");
  });

  test("a cancelled busy loop is interrupted through the ladder (the rung recorded) and the next call works", async () => {
    const abort = new AbortController();
    const call = client.callTool({ name: "python", arguments: { code: "while True: pass" } }, undefined, { signal: abort.signal });
    setTimeout(() => abort.abort("the test cancels"), 800);
    await expect(call).rejects.toThrow();
    const after = await client.callTool({ name: "python", arguments: { code: "x" } });
    expect(textOf(after)).toMatch(/\n41\n$/);
    const own = sessionOf(after);
    const loop = await eventually(async () => (await executions(client, own)).find((r) => r.code === "while True: pass" && r.status !== "running"));
    expect(loop.status).toBe("interrupted");
    expect(typeof loop.ended_by).toBe("string");
    expect(["message", "signal", "kill"]).toContain(loop.ended_by);
  }, 60_000);

  test("timeout_s interrupts the cell: an error result saying so", async () => {
    const result = await client.callTool({ name: "python", arguments: { code: "import time\ntime.sleep(30)", timeout_s: 0.5 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("[status: interrupted");
    expect(textOf(result)).toContain("timeout_s=0.5 elapsed");
  }, 60_000);

  test("bad calls are MCP errors with the stable code: unknown tool, missing code, wrong types, oversized code", async () => {
    const unknown = await refusal(client.callTool({ name: "no_such_tool", arguments: {} }));
    expect(unknown.code).toBe(-32602);
    expect(unknown.message).toContain("MCP_UNKNOWN_TOOL");
    const missing = await refusal(client.callTool({ name: "python", arguments: {} }));
    expect(missing.message).toContain("MCP_INVALID_ARGUMENTS");
    expect(missing.message).toContain("code");
    expect((await refusal(client.callTool({ name: "python", arguments: { code: 7 } }))).message).toContain("MCP_INVALID_ARGUMENTS");
    expect((await refusal(client.callTool({ name: "python", arguments: { code: "1", timeout_s: -1 } }))).message).toContain("timeout_s");
    expect((await refusal(client.callTool({ name: "python", arguments: { code: "1", session: "not an id" } }))).message).toContain("session");
    expect((await refusal(client.callTool({ name: "python", arguments: { code: "1", cod: "2" } }))).message).toContain('"cod"');
    expect((await refusal(client.callTool({ name: "session_log", arguments: { page: 0 } }))).message).toContain("MCP_INVALID_ARGUMENTS");
    const big = await refusal(client.callTool({ name: "python", arguments: { code: `# ${"x".repeat(262_144)}` } }));
    expect(big.message).toContain("CELL_TOO_LARGE");
    // At the cap exactly it runs.
    const atCap = await client.callTool({ name: "python", arguments: { code: `#${"x".repeat(262_143)}` } });
    expect(atCap.isError).toBe(false);
  }, 60_000);

  test("sessions lists this connection's own session; session_log pages its records", async () => {
    const own = sessionOf(await client.callTool({ name: "python", arguments: { code: "pass" } }));
    const listed = JSON.parse(textOf(await client.callTool({ name: "sessions", arguments: {} }))) as { own_session: string; sessions: Array<{ session_id: string }> };
    expect(listed.own_session).toBe(own);
    expect(listed.sessions.map((s) => s.session_id)).toContain(own);
    const page1 = JSON.parse(textOf(await client.callTool({ name: "session_log", arguments: { page_size: 2 } }))) as { session: string; page: number; pages: number; total: number; records: Array<{ session_id?: string }> };
    expect(page1.session).toBe(own);
    expect(page1.records).toHaveLength(2);
    expect(page1.pages).toBe(Math.ceil(page1.total / 2));
    const last = JSON.parse(textOf(await client.callTool({ name: "session_log", arguments: { page_size: 2, page: page1.pages } }))) as { records: Array<{ kind: string; code?: string }> };
    expect(last.records.at(-1)).toMatchObject({ kind: "execution", code: "pass" });
    const past = JSON.parse(textOf(await client.callTool({ name: "session_log", arguments: { page_size: 2, page: page1.pages + 1 } }))) as { records: unknown[] };
    expect(past.records).toEqual([]);
  });

  test("a call naming a session runs in that session's workbench", async () => {
    await client.callTool({ name: "python", arguments: { code: "shared = 'named'", session: "mcp-named" } });
    const other = await open();
    const seen = await other.callTool({ name: "python", arguments: { code: "shared", session: "mcp-named" } });
    expect(textOf(seen)).toMatch(/'named'\n$/);
  }, 60_000);
});

describe("two stdio clients at once", () => {
  test("each has its own session and workbench: no cross-talk of names, output or cancellation", async () => {
    const [a, b] = await Promise.all([open(), open()]);
    await a.callTool({ name: "python", arguments: { code: "mine = 'a'" } });
    const missing = await b.callTool({ name: "python", arguments: { code: "mine" } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain("NameError");
    // b prints while a's busy loop is cancelled: b's cell is untouched, b sees only its own output, a none of b's.
    const aNotes: string[] = [];
    const bNotes: string[] = [];
    const abort = new AbortController();
    const aCall = a.callTool({ name: "python", arguments: { code: "while True: pass" } }, undefined, { signal: abort.signal, onprogress: (p) => aNotes.push(p.message ?? "") });
    const bCall = b.callTool({ name: "python", arguments: { code: "import time\nfor i in range(4):\n    print('b', i, flush=True)\n    time.sleep(0.3)" } }, undefined, { onprogress: (p) => bNotes.push(p.message ?? "") });
    setTimeout(() => abort.abort(), 400);
    await expect(aCall).rejects.toThrow();
    const bResult = await bCall;
    expect(bResult.isError).toBe(false);
    expect(textOf(bResult)).toContain("b 0\nb 1\nb 2\nb 3\n");
    expect(bNotes.join("")).toBe("b 0\nb 1\nb 2\nb 3\n");
    expect(aNotes).toEqual([]);
  }, 60_000);

  test("a client that hangs up mid-cell interrupts its cell", async () => {
    const { client, transport } = await stdioClient(dirs);
    const own = sessionOf(await client.callTool({ name: "python", arguments: { code: "pass" } }));
    void client.callTool({ name: "python", arguments: { code: "import time\nwhile True: time.sleep(0.01)" } }).catch(() => undefined);
    const watcher = await open();
    await eventually(async () => (await executions(watcher, own)).find((r) => String(r.code).includes("while True") && r.status === "running"));
    await transport.close();
    const loop = await eventually(async () => (await executions(watcher, own)).find((r) => String(r.code).includes("while True") && r.status !== "running"));
    expect(loop.status).toBe("interrupted");
    expect(loop.ended_by).toBeTruthy();
  }, 60_000);
});

describe("the daemon killed mid-call", () => {
  test("the call gets an error result, and the next call starts a daemon again", async () => {
    await expectRecoveryFromKilledDaemon(await open(), dirs.dataDir);
  }, 120_000);
});
