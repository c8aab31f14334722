// `klbr mcp --http HOST:PORT`: Streamable HTTP at /mcp, one SDK transport and one connection (its
// own session) per MCP session, behind a bearer token. A client whose HTTP stream closes before
// its call was answered has left: that call's cell is interrupted, as a stdio client's hang-up.
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { HostError } from "../errors";
import type { DaemonLink } from "./daemon";
import { createMcpConnection, type McpConnection } from "./server";

/** The path the MCP endpoint answers on (C22). */
export const MCP_PATH = "/mcp";
/** The largest request body taken: a cell at the 262,144-byte cap, escaped as JSON, fits many times over. */
const MAX_BODY_BYTES = 4 << 20;

/** Where to listen: `HOST:PORT`, `[v6]:PORT`, or a bare `PORT` (on 127.0.0.1). */
export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:[\]]*):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new HostError("CLI_USAGE", `--http needs HOST:PORT (or a port), e.g. 127.0.0.1:8765, got ${JSON.stringify(value)}`);
  const host = (match[1] ?? "").replace(/^\[|\]$/g, "") || "127.0.0.1";
  return { host, port };
}

/** A fresh token, or KLBR_MCP_TOKEN when it is set. */
export function mcpToken(env: NodeJS.ProcessEnv = process.env): { token: string; fromEnv: boolean } {
  const given = env.KLBR_MCP_TOKEN;
  if (given !== undefined && given !== "") return { token: given, fromEnv: true };
  return { token: randomBytes(24).toString("base64url"), fromEnv: false };
}

/** Whether an Authorization header carries `token` as a Bearer credential (the scheme is case-insensitive, RFC 9110 11.1), compared in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? "");
  if (!m) return false;
  const given = Buffer.from(m[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A running HTTP server: its URL, and the stop (interrupts calls in flight, then closes). */
export interface McpHttp {
  readonly url: string;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  connection: McpConnection;
}

/** Serve MCP over Streamable HTTP; every request must carry `Authorization: Bearer <token>`. */
export async function serveHttp(link: DaemonLink, listen: { host: string; port: number }, token: string, session?: string): Promise<McpHttp> {
  const sessions = new Map<string, Session>();
  const authorized = (req: IncomingMessage) => bearerMatches(req.headers.authorization, token);
  const http = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) reply(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: `MCP_HTTP: ${error.message}` }, id: null });
      else res.destroy();
    });
  });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path !== MCP_PATH) return reply(res, 404, { error: `MCP_NOT_FOUND: the MCP endpoint is ${MCP_PATH}` });
    if (!authorized(req)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="klbr mcp"');
      return reply(res, 401, { error: "MCP_UNAUTHORIZED: send the token klbr mcp printed (or KLBR_MCP_TOKEN) as Authorization: Bearer <token>" });
    }
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (req.method !== "POST") {
      if (!known) return reply(res, typeof id === "string" ? 404 : 400, rpcError(typeof id === "string" ? "MCP_SESSION_NOT_FOUND: no such MCP session (it ended)" : "MCP_SESSION_REQUIRED: send the mcp-session-id header"));
      return known.transport.handleRequest(req, res);
    }
    const body = await readJson(req, res);
    if (body === undefined) return;
    let target = known;
    if (!target) {
      if (typeof id === "string") return reply(res, 404, rpcError("MCP_SESSION_NOT_FOUND: no such MCP session (it ended); initialize a new one"));
      if (!(Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body))) {
        return reply(res, 400, rpcError("MCP_SESSION_REQUIRED: the first request of a session is initialize; later ones send its mcp-session-id header"));
      }
      target = open(session);
    }
    watchDeparture(res, target.connection, body);
    await target.transport.handleRequest(req, res, body);
  };
  const open = (sessionId?: string): Session => {
    const connection = createMcpConnection(link, sessionId);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, entry),
    });
    const entry: Session = { transport, connection };
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    void connection.server.connect(transport);
    return entry;
  };
  await new Promise<void>((resolve, reject) => {
    http.once("error", (error: NodeJS.ErrnoException) => reject(new HostError("MCP_LISTEN_FAILED", `cannot listen on ${listen.host}:${listen.port}: ${error.code ?? error.message}`)));
    http.listen(listen.port, listen.host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}${MCP_PATH}`,
    close: async () => {
      const open = [...sessions.values()];
      // Closing a connection aborts its calls, which interrupts their cells; wait until they ended.
      await Promise.allSettled(open.map((s) => s.connection.server.close()));
      await Promise.allSettled(open.map((s) => s.connection.settled()));
      await closeHttp(http);
    },
  };
}

/** Interrupt the tools/call requests of this POST if the client drops the stream before their answers. */
function watchDeparture(res: ServerResponse, connection: McpConnection, body: unknown): void {
  const ids = (Array.isArray(body) ? body : [body]).filter((m) => m && typeof m === "object" && m.method === "tools/call" && m.id !== undefined).map((m) => m.id as string | number);
  if (ids.length === 0) return;
  res.once("close", () => {
    if (!res.writableFinished) for (const id of ids) connection.abandon(id);
  });
}

async function readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      reply(res, 413, rpcError(`MCP_REQUEST_TOO_LARGE: a request body is at most ${MAX_BODY_BYTES} bytes`));
      req.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (error) {
    reply(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: `MCP_PARSE_ERROR: ${(error as Error).message}` }, id: null });
    return undefined;
  }
}

function rpcError(message: string): unknown {
  return { jsonrpc: "2.0", error: { code: -32000, message }, id: null };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function closeHttp(http: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
