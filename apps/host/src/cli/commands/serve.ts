import { serveControl } from "../../control/server";
import { Host } from "../../runtime/host";
import { dataDirOf, type CommonOptions } from "../target";

/** `klbr serve`: the daemon. Stops cleanly (every worker tree) on SIGINT/SIGTERM. */
export async function serveCommand(opts: CommonOptions): Promise<number> {
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
