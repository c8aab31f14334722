// One MCP connection's server (stdio, or one Streamable HTTP session): the three tools of C22 over
// the control API, with this connection's own session. Transports live in stdio.ts and http.ts.
import { randomBytes } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolRequest, type CallToolResult, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { HostError } from "../errors";
import { hostVersion } from "../version";
import { runCell } from "./cell";
import type { DaemonLink } from "./daemon";
import { failureResult } from "./result";
import { pythonArgs, sessionLogArgs, sessionsArgs, toolNamed, TOOLS } from "./tools";

/** What the model is told about this server when a client shows server instructions. */
const INSTRUCTIONS =
  "klbr runs Python cells in a persistent, supervised workbench with a durable log. " +
  "Use the python tool for every cell: names survive between calls, a cancelled call interrupts its cell, and timeout_s bounds one. " +
  "sessions lists the workbenches; session_log reads what ran in one.";

/** A session id of this connection's own (a C2 identifier: mcp-<time>-<random>). */
export function newConnectionSession(): string {
  return `mcp-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

/** One connection's MCP server and its own session. */
export interface McpConnection {
  readonly server: Server;
  /** The session its calls use unless they name another. */
  readonly session: string;
  /** The client went away before call `requestId` was answered (its HTTP stream closed): interrupt its cell. */
  abandon(requestId: string | number): void;
  /** Resolves once every call in flight has ended (after a close, their cells were interrupted). */
  settled(): Promise<void>;
}

/** Build the server of one connection; `session` defaults to a fresh one of its own. */
export function createMcpConnection(link: DaemonLink, session: string = newConnectionSession()): McpConnection {
  const server = new Server({ name: "klbr", title: "klbr runtime", version: hostVersion() }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  // Calls in flight by JSON-RPC id, for a transport that sees the client leave without closing the session.
  const abandoned = new Map<string | number, AbortController>();
  const inFlight = new Set<Promise<unknown>>();
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const call = callTool(request, extra);
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call)).catch(() => undefined);
    return call;
  });
  const callTool = async (request: CallToolRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Promise<CallToolResult> => {
    const tool = toolNamed(request.params.name);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    switch (tool.name) {
      case "python": {
        const checked = pythonArgs(args);
        const progressToken = extra._meta?.progressToken;
        // One signal for both ends of a call (the client's cancel, the client gone); not AbortSignal.any,
        // whose dependent signals cost more per call than the whole of this handler.
        const gone = new AbortController();
        const cancelled = () => gone.abort();
        extra.signal.addEventListener("abort", cancelled, { once: true });
        if (extra.signal.aborted) gone.abort();
        abandoned.set(extra.requestId, gone);
        try {
          return await runCell(link, checked, checked.session ?? session, {
            signal: gone.signal,
            ...(progressToken !== undefined ? { progressToken } : {}),
            sendNotification: (n) => extra.sendNotification(n),
          });
        } finally {
          extra.signal.removeEventListener("abort", cancelled);
          if (abandoned.get(extra.requestId) === gone) abandoned.delete(extra.requestId);
        }
      }
      case "sessions":
        sessionsArgs(args);
        return control(link, async (client) => {
          const status = (await client.request({ op: "status" })) as { sessions?: unknown[] };
          return { own_session: session, sessions: status.sessions ?? [] };
        });
      default: {
        const checked = sessionLogArgs(args);
        return control(link, (client) => client.request({ op: "log_page", session: checked.session ?? session, ...(checked.page ? { page: checked.page } : {}), ...(checked.page_size ? { page_size: checked.page_size } : {}) }));
      }
    }
  };
  return {
    server,
    session,
    abandon: (requestId) => abandoned.get(requestId)?.abort(),
    settled: async () => void (await Promise.allSettled([...inFlight])),
  };
}

/** A read over the control API as a JSON text result; a daemon that cannot answer is an error result. */
async function control(link: DaemonLink, read: (client: Awaited<ReturnType<DaemonLink["client"]>>) => Promise<unknown>): Promise<CallToolResult> {
  try {
    const value = await read(await link.client());
    return { content: [{ type: "text", text: JSON.stringify(value) }] };
  } catch (error) {
    return failureResult((error as HostError).code ?? "CONTROL_REQUEST_FAILED", (error as Error).message);
  }
}
