// Real MCP clients against `klbr mcp`: the TypeScript SDK's own Client over stdio and Streamable
// HTTP, each spawning the klbr CLI as a user's MCP client configuration would.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { CLI, HOST_DIR } from "../cli-run";

/** A data directory and workspace for one test file's daemon. */
export interface McpDirs {
  dataDir: string;
  workspace: string;
}

/** The argv of `klbr -d DIR -w WS mcp ...`. */
export function mcpArgv(dirs: McpDirs, ...more: string[]): string[] {
  return [...CLI, "-d", dirs.dataDir, "-w", dirs.workspace, "mcp", ...more];
}

/** A TS SDK client over stdio, with the server's stderr kept. */
export async function stdioClient(dirs: McpDirs, ...more: string[]): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const [command, ...args] = mcpArgv(dirs, ...more);
  const transport = new StdioClientTransport({ command: command!, args, cwd: HOST_DIR, stderr: "pipe", env: process.env as Record<string, string> });
  let stderr = "";
  transport.stderr?.on("data", (c) => (stderr += c));
  const client = new Client({ name: "klbr-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** `klbr mcp --http 127.0.0.1:0`: the process, its URL once it printed it. */
export async function httpServer(dirs: McpDirs, env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; url: string; stdout: () => string; stop: () => Promise<void> }> {
  const [command, ...args] = mcpArgv(dirs, "--http", "127.0.0.1:0");
  const child = spawn(command!, args, { cwd: HOST_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      stdout += c;
      const m = /serving (http:\/\/\S+)/.exec(stdout);
      if (m && stdout.includes("token")) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`klbr mcp --http exited ${code}: ${stderr}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return { child, url, stdout: () => stdout, stop };
}

/** A TS SDK client over Streamable HTTP, sending `token` as a bearer token. */
export async function httpClient(url: string, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "klbr-test-http", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** The text content of a tool result. */
export function textOf(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
}

/** The pid of the daemon serving a data directory (its lock's holder file), or null. */
export function daemonPid(dataDir: string): number | null {
  const file = join(dataDir, "klbr.lock.pid");
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, "utf8").trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** Stop the daemon `klbr mcp` started (it outlives its clients by design) and wait until it is gone. */
export async function stopDaemonOf(dataDir: string, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  const pid = daemonPid(dataDir);
  if (pid === null || !alive(pid)) return;
  process.kill(pid, signal);
  for (let i = 0; i < 400 && alive(pid); i++) await sleep(25);
}

/** Wait until `check` resolves truthy (polling what the daemon recorded). */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await sleep(50);
  }
}

/** One session's execution records, read through a client's session_log tool. */
export async function executions(client: Client, session: string): Promise<Array<Record<string, unknown>>> {
  const page = JSON.parse(textOf(await client.callTool({ name: "session_log", arguments: { session, page_size: 200 } }))) as { records: Array<Record<string, unknown>> };
  return page.records.filter((r) => r.kind === "execution");
}

/** The session a client's calls run in (from the `_meta` of a python result). */
export function sessionOf(result: unknown): string {
  return ((result as CallToolResult)._meta?.["klbr/execution"] as { session_id: string }).session_id;
}

/**
 * C22's recovery, as both transports face it: the daemon SIGKILLed while a call's cell runs gives
 * that call an error result naming HOST_NOT_RUNNING, and the next call starts a daemon again.
 */
export async function expectRecoveryFromKilledDaemon(client: Client, dataDir: string): Promise<void> {
  const own = sessionOf(await client.callTool({ name: "python", arguments: { code: "pass" } }));
  const pid = daemonPid(dataDir)!;
  const call = client.callTool({ name: "python", arguments: { code: "import time\ntime.sleep(30)" } });
  // Killed while the cell runs (its record says so), not before the call reached the daemon.
  await eventually(async () => (await executions(client, own)).find((r) => String(r.code).includes("time.sleep(30)") && r.status === "running"));
  process.kill(pid, "SIGKILL");
  const result = await call;
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain("HOST_NOT_RUNNING");
  const next = await client.callTool({ name: "python", arguments: { code: "6 * 7" } });
  expect(next.isError).toBe(false);
  expect(textOf(next)).toMatch(/\n42\n$/);
  expect(daemonPid(dataDir)).not.toBe(pid);
}

/**
 * A cell that prints `first`, then waits (up to two minutes) until `marker` exists, which the
 * client's progress handler creates on seeing `first`, then prints `second`. Its output says,
 * without a clock, whether the notification reached the client while the cell still ran:
 * "first\nsecond\n" if it did, "first\nno progress while the cell ran\n" if not.
 */
export function printsThenAwaitsClient(marker: string): string {
  return [
    "import os, time",
    "print('first', flush=True)",
    "for _ in range(2400):",
    `    if os.path.exists(${JSON.stringify(marker)}): break`,
    "    time.sleep(0.05)",
    `print('second' if os.path.exists(${JSON.stringify(marker)}) else 'no progress while the cell ran', flush=True)`,
  ].join("\n");
}
