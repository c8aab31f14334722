// `klbr mcp` over stdio: one client, one connection, its own session. The client hanging up
// (stdin ends) closes the server, which aborts the calls in flight: their cells are interrupted
// before this process exits.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { DaemonLink } from "./daemon";
import { createMcpConnection } from "./server";

/** Serve one MCP client on stdin/stdout until it hangs up. */
export async function serveStdio(link: DaemonLink, session?: string): Promise<void> {
  const connection = createMcpConnection(link, session);
  const { server } = connection;
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(transport);
  // The SDK's stdio transport does not watch for the end of its input; a client that exits must end the calls.
  const hangUp = () => void server.close();
  process.stdin.once("end", hangUp);
  process.stdin.once("close", hangUp);
  process.once("SIGTERM", hangUp);
  process.once("SIGINT", hangUp);
  await closed;
  await connection.settled();
}
