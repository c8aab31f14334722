import type { Command } from "commander";
import { dataLayout } from "../../paths";
import { optionsOf, run, type CommonOptions } from "../command";
import { databaseOptions, openReadStore, type DatabaseOptions } from "../read-store";
import { dataDirOf } from "../target";

/**
 * `klbr web [--listen HOST:PORT]` (C23): the web view over the data directory's log (or the
 * PostgreSQL one of `--database`), beside a daemon or without one (then read-only, nothing live). The URL with its token is the first line
 * printed; Ctrl-C stops it.
 */
export async function webCommand(opts: CommonOptions & DatabaseOptions & { listen?: string }): Promise<number> {
  const { DEFAULT_WEB_LISTEN, parseListen } = await import("../../web/listen");
  const listen = opts.listen === undefined ? DEFAULT_WEB_LISTEN : parseListen(opts.listen);
  const layout = dataLayout(dataDirOf(opts));
  const { store, shown } = await openReadStore(opts);
  try {
    const { startWebServer } = await import("../../web/server");
    const start = (port: number) => startWebServer({ views: store, routesFile: layout.routes, controlSocket: layout.controlSocket, host: listen.host, port });
    const web = await firstFree(start, listen.port, opts.listen === undefined ? 20 : 1);
    process.stdout.write(`${web.url}\n`);
    process.stderr.write(`klbr web: serving ${shown} on ${web.url.replace(/\?token=.*/, "")} (Ctrl-C stops)\n`);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    await web.close();
  } finally {
    await store.close();
  }
  return 0;
}

/** Listen on `port`, or (the default port only) the next one up when it is taken, as Jupyter's port retries. */
async function firstFree<T>(start: (port: number) => Promise<T>, port: number, tries: number): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await start(port + i);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || i + 1 >= tries) throw error;
    }
  }
}

/** Register `klbr web`. */
export function register(program: Command): void {
  const web = program
    .command("web")
    .description("serve a local web page of the sessions, their requests, cells and costs (prints the URL with its token first)")
    .option("--listen <host:port>", "where to listen (default 127.0.0.1:8765; port 0: any free port)");
  databaseOptions(web).action(run(async (cmd) => webCommand(optionsOf(cmd))));
}
