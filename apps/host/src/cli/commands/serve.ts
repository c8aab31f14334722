import type { Command } from "commander";
import { optionsOf, run, type CommonOptions } from "../command";
import { sandboxSettings } from "../../sandbox/settings";
import { parseIdleTimeout, parseSpares } from "../pool-options";
import { checkKlbrPython } from "../python-check";
import { parseLogLevel, ServeLog } from "../serve-log";
import { dataDirOf } from "../target";

/** `klbr serve`: the daemon. Stops cleanly (every worker tree) on SIGINT/SIGTERM. */
export async function serveCommand(
  opts: CommonOptions & { sandbox?: string; network?: string; route?: string; drive?: boolean; passEnv?: string[]; logLevel?: string; json?: boolean; spare?: string; idleTimeout?: string; liveOutput?: boolean },
): Promise<number> {
  const log = new ServeLog(parseLogLevel(opts.logLevel), opts.json === true);
  // Checked before anything starts: a sandbox asked for and not understood is an error, never none.
  const { mode, network } = sandboxSettings({ sandbox: opts.sandbox, network: opts.network });
  const spares = parseSpares(opts.spare ?? "1");
  const idleTimeoutMs = opts.idleTimeout === undefined ? undefined : parseIdleTimeout(opts.idleTimeout);
  checkKlbrPython();
  const { serveControl } = await import("../../control/server");
  const { Host } = await import("../../runtime/host");
  const drive = await driveOption(dataDirOf(opts), opts);
  const startedAtMs = Date.now();
  const host = await Host.start({ dataDir: dataDirOf(opts), sandbox: mode, network, drive, passEnv: opts.passEnv ?? [], spares, liveOutput: opts.liveOutput !== false, ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}), ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  let server;
  try {
    server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  } catch (error) {
    await host.stop();
    throw error;
  }
  const sandbox = host.sandbox.describe();
  const isolation = sandbox.mode === "none" ? "unsandboxed" : `sandbox ${sandbox.mode}, network ${sandbox.network ? "on" : "off"}`;
  const driving = host.turns ? `, sessions driven by route ${host.turns.route.name} (${host.turns.route.model})` : ", no model route (sessions are not driven)";
  log.event("info", "serving", { data_dir: host.dataDir, socket: host.layout.controlSocket, pid: process.pid, sandbox: sandbox.mode, route: host.turns?.route.name ?? null }, `serving ${host.dataDir} on ${host.layout.controlSocket} (pid ${process.pid}, ${isolation}${driving})`);
  const events = await followEvents(host.layout.database, startedAtMs, log);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  log.event("info", "stopping", { pid: process.pid }, "stopping");
  server.close();
  await host.stop();
  events.stop();
  log.event("info", "stopped", { pid: process.pid }, "stopped");
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

/**
 * What the daemon does, as the durable log records it (workers, activations, incidents; cells,
 * inputs and requests at debug): a read-only follower of the database, polled every 300 ms, that
 * reports what was written since this start.
 */
async function followEvents(database: string, sinceMs: number, log: ServeLog): Promise<{ stop: () => void }> {
  const { default: Database } = await import("better-sqlite3");
  const { followLog } = await import("../../store/log-view");
  const sqlite = new Database(database, { readonly: true, fileMustExist: true });
  sqlite.pragma("busy_timeout = 5000");
  const follower = followLog(sqlite);
  const seen = new Set<string>();
  const report = (entries: Array<{ key: string; at_ms: number; kind: string }>, fresh: (e: { at_ms: number }) => boolean) => {
    const shown = entries.filter((e) => !seen.has(e.key) && fresh(e));
    for (const e of entries) seen.add(e.key);
    log.entries(shown as Parameters<ServeLog["entries"]>[0]);
  };
  report(follower.poll(), (e) => e.at_ms >= sinceMs);
  const timer = setInterval(() => report(follower.poll(), () => true), 300);
  return {
    stop: () => {
      clearInterval(timer);
      report(follower.poll(), () => true);
      sqlite.close();
    },
  };
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
    .option("--no-live-output", "do not stream running cells' output to clients (C16); they get it from the completion record")
    .option("--pass-env <name>", "also give workers and commands this variable of the daemon's environment (repeatable; KLBR_PASS_ENV=A,B too)", (name: string, names: string[]) => [...names, name], [] as string[])
    .option("--log-level <level>", "what to log on stderr, one line per event: error | warn | info (start, workers, activations, incidents) | debug (cells, inputs, requests)", "info")
    .option("--json", "log one JSON object per line")
    .option("--spare <n>", "warm spare workbenches kept started for new sessions and restarts, 0 for none (C19)", "1")
    .option("--idle-timeout <duration>", "shut down a workbench idle this long (500ms, 30s, 5m, 2h; default off); its next cell starts a new generation (C19)")
    .action(run(async (cmd) => serveCommand(optionsOf(cmd))));
}
