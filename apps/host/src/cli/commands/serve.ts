import type { Command } from "commander";
import { optionsOf, run, type CommonOptions } from "../command";
import { checkKlbrPython } from "../python-check";
import { dataDirOf } from "../target";

/** `klbr serve`: the daemon. Stops cleanly (every worker tree) on SIGINT/SIGTERM. */
export async function serveCommand(opts: CommonOptions): Promise<number> {
  checkKlbrPython();
  const { serveControl } = await import("../../control/server");
  const { Host } = await import("../../runtime/host");
  const host = await Host.start({ dataDir: dataDirOf(opts), ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  let server;
  try {
    server = await serveControl(host, host.layout.controlSocket);
  } catch (error) {
    await host.stop();
    throw error;
  }
  process.stderr.write(`klbr: serving ${host.dataDir} on ${host.layout.controlSocket} (pid ${process.pid})\n`);
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

/** Register `klbr serve`. */
export function register(program: Command): void {
  program
    .command("serve")
    .description("run the daemon (control socket in the data directory)")
    .action(run(async (cmd) => serveCommand(optionsOf(cmd))));
}
