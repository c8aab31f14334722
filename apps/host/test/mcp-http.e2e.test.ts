// `klbr mcp --http` (C22): Streamable HTTP at /mcp behind a bearer token, driven by the TypeScript
// SDK's own StreamableHTTPClientTransport; several sessions at once, each its own workbench.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { removeTree, tempDir } from "./helpers";
import { eventually, executions, expectRecoveryFromKilledDaemon, httpClient, httpServer, sessionOf, stopDaemonOf, textOf, type McpDirs } from "./mcp/support";

let dirs: McpDirs;
let server: Awaited<ReturnType<typeof httpServer>>;
let token: string;
const clients: Client[] = [];

async function open(): Promise<Client> {
  const { client } = await httpClient(server.url, token);
  clients.push(client);
  return client;
}

beforeAll(async () => {
  dirs = { dataDir: tempDir("klbr-mcph-"), workspace: tempDir("klbr-mcphw-") };
  const env = { ...process.env };
  delete env.KLBR_MCP_TOKEN;
  server = await httpServer(dirs, env);
  token = /token (\S+)/.exec(server.stdout())![1]!;
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await server?.stop();
  await stopDaemonOf(dirs.dataDir);
  removeTree(dirs.dataDir);
  removeTree(dirs.workspace);
});

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "0" } } };
const post = (headers: Record<string, string>, path = "/mcp") =>
  fetch(new URL(path, server.url), { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(initialize) });

describe("the HTTP endpoint", () => {
  test("listens on 127.0.0.1 and prints the URL and a fresh token", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(token.length).toBeGreaterThanOrEqual(32);
  });

  test("a missing or wrong bearer token is 401 with WWW-Authenticate; another path is 404", async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await none.text()).toContain("MCP_UNAUTHORIZED");
    expect((await post({ authorization: `Bearer ${token}x` })).status).toBe(401);
    expect((await post({ authorization: token })).status).toBe(401);
    // The scheme is case-insensitive (RFC 9110): a client that writes "bearer" is let in.
    expect((await post({ authorization: `bearer ${token}` })).status).toBe(200);
    expect((await post({ authorization: `Bearer ${token}` }, "/other")).status).toBe(404);
    // The SDK client without the token cannot even initialize.
    await expect(httpClient(server.url, "not-the-token")).rejects.toThrow(/401|Unauthorized/i);
  });

  test("a request naming a session that does not exist is 404; a first request that is not initialize is 400", async () => {
    const unknown = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, "mcp-session-id": "no-such" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) });
    expect(unknown.status).toBe(404);
    const first = await fetch(server.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) });
    expect(first.status).toBe(400);
  });

  test("KLBR_MCP_TOKEN sets the token (not printed)", async () => {
    const other = await httpServer(dirs, { ...process.env, KLBR_MCP_TOKEN: "a-token-the-user-chose" });
    try {
      expect(other.stdout()).toContain("token from KLBR_MCP_TOKEN");
      expect(other.stdout()).not.toContain("a-token-the-user-chose");
      const { client } = await httpClient(other.url, "a-token-the-user-chose");
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["python", "sessions", "session_log"]);
      await client.close();
    } finally {
      await other.stop();
    }
  }, 60_000);
});

describe("tools over HTTP, the TS SDK client", () => {
  let client: Client;
  beforeAll(async () => {
    client = await open();
  });

  test("x = 41 then x + 1 is 42; a plot is image content", async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["python", "sessions", "session_log"]);
    await client.callTool({ name: "python", arguments: { code: "x = 41" } });
    expect(textOf(await client.callTool({ name: "python", arguments: { code: "x + 1" } }))).toMatch(/ · ran \d+ms\]\n42\n$/);
    const plot = await client.callTool({ name: "python", arguments: { code: "import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.show()" } });
    expect((plot.content as Array<{ type: string; mimeType?: string }>).filter((c) => c.type === "image").map((c) => c.mimeType)).toEqual(["image/png"]);
  }, 120_000);

  test("progress notifications arrive before the result", async () => {
    const notes: string[] = [];
    let resultSeen = false;
    const early: boolean[] = [];
    const result = await client.callTool({ name: "python", arguments: { code: "import time\nprint('one', flush=True)\ntime.sleep(0.5)\nprint('two', flush=True)" } }, undefined, {
      onprogress: (p) => {
        notes.push(p.message ?? "");
        early.push(!resultSeen);
      },
    });
    resultSeen = true;
    // (How the worker cuts output into messages is its pacing's, C16: a print's pieces may come apart.)
    expect(notes.join("")).toBe("one\ntwo\n");
    expect(early.length).toBeGreaterThanOrEqual(2);
    expect(early.every(Boolean)).toBe(true);
    expect(textOf(result)).toContain("one\ntwo\n");
  });

  test("a cancelled busy loop is interrupted (rung recorded); the next call works", async () => {
    const abort = new AbortController();
    const call = client.callTool({ name: "python", arguments: { code: "while True: pass" } }, undefined, { signal: abort.signal });
    setTimeout(() => abort.abort(), 700);
    await expect(call).rejects.toThrow();
    const after = await client.callTool({ name: "python", arguments: { code: "x" } });
    expect(textOf(after)).toMatch(/\n41\n$/);
    const loop = await eventually(async () => (await executions(client, sessionOf(after))).find((r) => r.code === "while True: pass" && r.status !== "running"));
    expect(loop).toMatchObject({ status: "interrupted", ended_by: expect.any(String), origin: "mcp" });
  }, 60_000);

  test("bad calls are MCP errors with the stable code", async () => {
    const codeOf = (call: Promise<unknown>) => call.then(() => "no error", (e: McpError) => `${e.code} ${e.message}`);
    expect(await codeOf(client.callTool({ name: "nope", arguments: {} }))).toMatch(/^-32602 .*MCP_UNKNOWN_TOOL/);
    expect(await codeOf(client.callTool({ name: "python", arguments: {} }))).toMatch(/^-32602 .*MCP_INVALID_ARGUMENTS/);
    expect(await codeOf(client.callTool({ name: "python", arguments: { code: "#".repeat(262_145) } }))).toMatch(/^-32602 .*CELL_TOO_LARGE/);
  });
});

describe("three HTTP sessions at once", () => {
  test("each its own session and workbench: names, output and cancellation stay apart", async () => {
    const three = await Promise.all([open(), open(), open()]);
    const sessions = await Promise.all(three.map(async (c, i) => sessionOf(await c.callTool({ name: "python", arguments: { code: `who = ${i}` } }))));
    expect(new Set(sessions).size).toBe(3);
    const notes: string[][] = [[], [], []];
    const abort = new AbortController();
    const calls = three.map((c, i) =>
      c.callTool(
        { name: "python", arguments: { code: i === 0 ? "while True: pass" : `import time\nfor k in range(3):\n    print(who, k, flush=True)\n    time.sleep(0.2)\nwho` } },
        undefined,
        { ...(i === 0 ? { signal: abort.signal } : {}), onprogress: (p) => notes[i]!.push(p.message ?? "") },
      ),
    );
    setTimeout(() => abort.abort(), 300);
    await expect(calls[0]).rejects.toThrow();
    const [one, two] = await Promise.all([calls[1]!, calls[2]!]);
    expect(textOf(one)).toMatch(/1 0\n1 1\n1 2\n1\n$/);
    expect(textOf(two)).toMatch(/2 0\n2 1\n2 2\n2\n$/);
    // Each its own output and only that (a print's pieces may come as several messages, C16).
    expect(notes.map((n) => n.join(""))).toEqual(["", "1 0\n1 1\n1 2\n", "2 0\n2 1\n2 2\n"]);
  }, 60_000);

  test("a client that drops its connection mid-cell interrupts its cell", async () => {
    const { client, transport } = await httpClient(server.url, token);
    const own = sessionOf(await client.callTool({ name: "python", arguments: { code: "pass" } }));
    void client.callTool({ name: "python", arguments: { code: "import time\nwhile True: time.sleep(0.01)" } }).catch(() => undefined);
    const watcher = await open();
    await eventually(async () => (await executions(watcher, own)).find((r) => String(r.code).includes("while True") && r.status === "running"));
    await transport.close();
    const loop = await eventually(async () => (await executions(watcher, own)).find((r) => String(r.code).includes("while True") && r.status !== "running"));
    expect(loop).toMatchObject({ status: "interrupted", ended_by: expect.any(String) });
  }, 60_000);
});

describe("the daemon killed mid-call over HTTP", () => {
  test("an error result, then the next call starts a daemon again", async () => {
    await expectRecoveryFromKilledDaemon(await open(), dirs.dataDir);
  }, 120_000);
});
