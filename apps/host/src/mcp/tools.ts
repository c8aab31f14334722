// The tools `klbr mcp` offers (C22), each an input JSON schema a client can show and the check a
// call's arguments get. A bad call is an MCP error (JSON-RPC -32602) whose message starts with the
// stable code, so a client (or its model) can tell a mistake in the call from a cell that failed.
import { ErrorCode, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { LOG_PAGE_DEFAULT_SIZE, LOG_PAGE_MAX_SIZE } from "../control/protocol";

/** A session id as the control API takes it (C2 identifiers). */
const SESSION_PATTERN = "^[A-Za-z0-9_.-]{1,128}$";
const SESSION_RE = new RegExp(SESSION_PATTERN);

/** The most seconds a call may give its cell before it is interrupted (a day). */
export const MAX_TIMEOUT_S = 86_400;

/** Stable codes of bad MCP calls. */
export type McpCallCode = "MCP_UNKNOWN_TOOL" | "MCP_INVALID_ARGUMENTS";

/**
 * A bad call, answered as a JSON-RPC error -32602 with the message `CODE: message` and the code in
 * `data`. Not the SDK's McpError: its message already carries an "MCP error -32602:" prefix, which
 * the client adds again.
 */
export class CallError extends Error {
  override readonly name = "CallError";
  /** The JSON-RPC error code the SDK sends. */
  readonly code = ErrorCode.InvalidParams;
  readonly data: { code: string };
  constructor(code: string, message: string) {
    super(`${code}: ${message}`);
    this.data = { code };
  }
}

/** A bad call's error. */
export function callError(code: string, message: string): CallError {
  return new CallError(code, message);
}

/** The three tools, in the order tools/list gives them. */
export const TOOLS: Tool[] = [
  {
    name: "python",
    title: "Run Python",
    description:
      "Run one cell of Python in a persistent, supervised workbench: names defined by earlier calls stay defined (x = 41 in one call, x + 1 in the next). " +
      "The result is what the cell printed, its last expression's value, and its error, framed with when it ran and how long; each display (a plot, an image) comes as an image. " +
      "Top-level await works. Calls run in this connection's own session unless `session` names another.",
    inputSchema: {
      type: "object",
      properties: {
        code: { type: "string", description: "Python source of the cell (at most 262,144 bytes of UTF-8)" },
        session: { type: "string", pattern: SESSION_PATTERN, description: "the session whose workbench runs it (default: this connection's own)" },
        timeout_s: { type: "number", exclusiveMinimum: 0, maximum: MAX_TIMEOUT_S, description: "interrupt the cell after this many seconds (default: none)" },
      },
      required: ["code"],
      additionalProperties: false,
    },
    annotations: { title: "Run Python", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  {
    name: "sessions",
    title: "List sessions",
    description: "List the daemon's sessions: each one's id, kind, state, workbench generation and running cell, and which is this connection's own.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    annotations: { title: "List sessions", readOnlyHint: true, openWorldHint: false },
  },
  {
    name: "session_log",
    title: "Read a session's log",
    description:
      "Read a session's records from the durable log, oldest first, one page at a time: its cells (code, output, status, which interrupt rung ended one), inputs and requests. " +
      "The reply says how many pages there are; ask for the last page to see the newest records.",
    inputSchema: {
      type: "object",
      properties: {
        session: { type: "string", pattern: SESSION_PATTERN, description: "the session (default: this connection's own)" },
        page: { type: "integer", minimum: 1, description: "which page, 1 for the oldest records (default 1)" },
        page_size: { type: "integer", minimum: 1, maximum: LOG_PAGE_MAX_SIZE, description: `records a page (default ${LOG_PAGE_DEFAULT_SIZE})` },
      },
      additionalProperties: false,
    },
    annotations: { title: "Read a session's log", readOnlyHint: true, openWorldHint: false },
  },
];

/** The arguments of a `python` call, checked. */
export interface PythonArgs {
  code: string;
  session?: string;
  timeout_s?: number;
}

/** The arguments of a `session_log` call, checked. */
export interface SessionLogArgs {
  session?: string;
  page?: number;
  page_size?: number;
}

type Args = Record<string, unknown>;

function bad(tool: string, message: string): CallError {
  return callError("MCP_INVALID_ARGUMENTS", `${tool}: ${message}`);
}

/** The tool a call names, or MCP_UNKNOWN_TOOL. */
export function toolNamed(name: string): Tool {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw callError("MCP_UNKNOWN_TOOL", `no tool named ${JSON.stringify(name)}; the tools are ${TOOLS.map((t) => t.name).join(", ")}`);
  return tool;
}

/** Refuse arguments the tool's schema does not have (a typo must not be silently ignored). */
function onlyKnown(tool: Tool, args: Args): void {
  const known = Object.keys(tool.inputSchema.properties ?? {});
  const extra = Object.keys(args).filter((k) => !known.includes(k));
  if (extra.length > 0) throw bad(tool.name, `unknown argument${extra.length > 1 ? "s" : ""} ${extra.map((k) => JSON.stringify(k)).join(", ")}; it takes ${known.join(", ") || "none"}`);
}

function session(tool: string, args: Args): string | undefined {
  const value = args.session;
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !SESSION_RE.test(value)) throw bad(tool, `session must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got ${JSON.stringify(value)}`);
  return value;
}

function integer(tool: string, args: Args, field: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = args[field];
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) throw bad(tool, `${field} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`);
  return value as number;
}

/** Check a `python` call. */
export function pythonArgs(args: Args): PythonArgs {
  onlyKnown(TOOLS[0]!, args);
  if (typeof args.code !== "string") throw bad("python", `code must be a string of Python source, got ${args.code === undefined ? "nothing" : JSON.stringify(args.code)}`);
  const timeout = args.timeout_s;
  if (timeout !== undefined && (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMEOUT_S)) {
    throw bad("python", `timeout_s must be a number of seconds above 0 and at most ${MAX_TIMEOUT_S}, got ${JSON.stringify(timeout)}`);
  }
  const s = session("python", args);
  return { code: args.code, ...(s !== undefined ? { session: s } : {}), ...(timeout !== undefined ? { timeout_s: timeout } : {}) };
}

/** Check a `sessions` call. */
export function sessionsArgs(args: Args): Record<string, never> {
  onlyKnown(TOOLS[1]!, args);
  return {};
}

/** Check a `session_log` call. */
export function sessionLogArgs(args: Args): SessionLogArgs {
  onlyKnown(TOOLS[2]!, args);
  const s = session("session_log", args);
  const page = integer("session_log", args, "page");
  const size = integer("session_log", args, "page_size", LOG_PAGE_MAX_SIZE);
  return { ...(s !== undefined ? { session: s } : {}), ...(page !== undefined ? { page } : {}), ...(size !== undefined ? { page_size: size } : {}) };
}
