import type { Command } from "commander";
import { optionsOf, run, type CommonOptions } from "../command";
import { sandboxSettings } from "../../sandbox/settings";
import { checkKlbrPython } from "../python-check";
import { dataDirOf } from "../target";

/** `klbr serve`: the daemon. Stops cleanly (every worker tree) on SIGINT/SIGTERM. */
export async function serveCommand(opts: CommonOptions & { sandbox?: string; network?: string; route?: string; drive?: boolean; passEnv?: string[] }): Promise<number> {
  // Checked before anything starts: a sandbox asked for and not understood is an error, never none.
  const { mode, network } = sandboxSettings({ sandbox: opts.sandbox, network: opts.network });
  checkKlbrPython();
  const { serveControl } = await import("../../control/server");
  const { Host } = await import("../../runtime/host");
  const drive = await driveOption(dataDirOf(opts), opts);
  const host = await Host.start({ dataDir: dataDirOf(opts), sandbox: mode, network, drive, passEnv: opts.passEnv ?? [], ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  let server;
  try {
    server = await serveControl(host, host.layout.controlSocket);
  } catch (error) {
    await host.stop();
    throw error;
  }
  const sandbox = host.sandbox.describe();
  const isolation = sandbox.mode === "none" ? "unsandboxed" : `sandbox ${sandbox.mode}, network ${sandbox.network ? "on" : "off"}`;
  const driving = host.turns ? `, sessions driven by route ${host.turns.route.name} (${host.turns.route.model})` : ", no model route (sessions are not driven)";
  process.stderr.write(`klbr: serving ${host.dataDir} on ${host.layout.controlSocket} (pid ${process.pid}, ${isolation}${driving})\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  process.stderr.write("klbr: stopping\n");
  server.close();
  await host.stop();
  return 0;
}

/**
 * Whether the daemon drives sessions (C10): with --route NAME, that route; else the default route
 * of routes.json when it has one; --no-drive never. A route whose key is unset stops the start.
 */
async function driveOption(dataDir: string, opts: { route?: string; drive?: boolean }): Promise<false | { route?: string }> {
  if (opts.drive === false) return false;
  if (opts.route !== undefined) return { route: opts.route };
  const { readRoutes } = await import("../../runtime/routes-file");
  const { dataLayout } = await import("../../paths");
  return readRoutes(dataLayout(dataDir).routes).default === null ? false : {};
}

/** Register `klbr serve`. */
export function register(program: Command): void {
  program
    .command("serve")
    .description("run the daemon (control socket in the data directory)")
    .option("--sandbox <mode>", "none | bwrap: run workers and workspace.run commands in a bubblewrap sandbox (default: KLBR_SANDBOX or none)")
    .option("--network <on|off>", "network inside the sandbox (default: KLBR_SANDBOX_NETWORK or on)")
    .option("--route <name>", "drive every session with this route (default: the default route of routes.json, when there is one)")
    .option("--no-drive", "do not drive sessions with a model, even when routes.json has a route")
    .option("--pass-env <name>", "also give workers and commands this variable of the daemon's environment (repeatable; KLBR_PASS_ENV=A,B too)", (name: string, names: string[]) => [...names, name], [] as string[])
    .action(run(async (cmd) => serveCommand(optionsOf(cmd))));
}
