import type { Command } from "commander";
import { optionsOf, run, sessionOption, type CommonOptions } from "../command";
import { dataDirOf } from "../target";

/**
 * `klbr mcp [--http HOST:PORT] [--session ID]`: the MCP server (C22) over stdio, or over
 * Streamable HTTP at /mcp behind a bearer token. A client of the data directory's daemon, started
 * when none runs; stdout belongs to the protocol under stdio, so everything else goes to stderr.
 */
export async function mcpCommand(opts: CommonOptions & { http?: string; session?: string }): Promise<number> {
  const session = sessionOption(opts.session);
  const { DaemonLink } = await import("../../mcp/daemon");
  const link = new DaemonLink({ dataDir: dataDirOf(opts), ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  link.onStarted = (pid, log) => process.stderr.write(`klbr mcp: no daemon was running: started klbr serve (pid ${pid ?? "unknown"}; its log: ${log})\n`);
  try {
    if (opts.http === undefined) {
      const { serveStdio } = await import("../../mcp/stdio");
      await serveStdio(link, session);
      return 0;
    }
    const { mcpToken, parseListen, serveHttp } = await import("../../mcp/http");
    const listen = parseListen(opts.http);
    const { token, fromEnv } = mcpToken();
    const http = await serveHttp(link, listen, token, session);
    process.stdout.write(`klbr mcp: serving ${http.url}\n`);
    process.stdout.write(fromEnv ? "klbr mcp: token from KLBR_MCP_TOKEN\n" : `klbr mcp: token ${token}\n`);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await http.close();
    return 0;
  } finally {
    await link.close();
  }
}

/** Register `klbr mcp`. */
export function register(program: Command): void {
  program
    .command("mcp")
    .description("serve the Model Context Protocol (tools python, sessions, session_log) over stdio, or Streamable HTTP with --http")
    .option("--http <host:port>", "serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (host 127.0.0.1 unless given; port 0 picks one), with a bearer token printed at start or KLBR_MCP_TOKEN")
    .option("-s, --session <id>", "the session calls use unless they name one (default: a new session per connection)")
    .addHelpText(
      "after",
      '\nMCP client configuration (stdio):\n  {"mcpServers": {"klbr": {"command": "klbr", "args": ["mcp"]}}}\n',
    )
    .action(run(async (cmd) => mcpCommand(optionsOf(cmd))));
}
