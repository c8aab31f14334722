import type { Command } from "commander";
import { stopLatch } from "../../early-stop";
import { optionsOf, run, type CommonOptions } from "../command";
import { limitSettings } from "../../limits/settings";
import { sandboxSettings } from "../../sandbox/settings";
import { parseIdleTimeout, parseLease, parseMaxCells, parseSpares } from "../pool-options";
import { checkKlbrPython } from "../python-check";
import { parseLogLevel, ServeLog } from "../serve-log";
import { dataDirOf } from "../target";
import { databaseChoice, type DatabaseChoice } from "../../db/database-url";
import { HostError } from "../../errors";
import type { SessionViewsStore } from "../../store/api";

/**
 * `klbr serve`: the daemon. Stops cleanly (every worker tree, the log closed, exit 0) on SIGINT or
 * SIGTERM at any moment: the binary arms the stop latch first thing (src/early-stop.ts), a stop
 * before the host starts starts nothing, and one during the start stops the host it made.
 */
export async function serveCommand(
  opts: CommonOptions & { sandbox?: string; network?: string; route?: string; drive?: boolean; passEnv?: string[]; limit?: string[]; logLevel?: string; json?: boolean; spare?: string; idleTimeout?: string; liveOutput?: boolean; maxCellsPerTurn?: string; web?: string; database?: string; lease?: string; sqliteFile?: string },
): Promise<number> {
  const stop = stopLatch();
  const log = new ServeLog(parseLogLevel(opts.logLevel), opts.json === true);
  // Checked before anything starts: a sandbox asked for and not understood is an error, never none.
  const { mode, network } = sandboxSettings({ sandbox: opts.sandbox, network: opts.network });
  const spares = parseSpares(opts.spare ?? "1");
  const idleTimeoutMs = opts.idleTimeout === undefined ? undefined : parseIdleTimeout(opts.idleTimeout);
  // C21: every daemon holds its sessions by leases (10 s unless told), on its own log or a shared one.
  const leaseMs = parseLease(opts.lease ?? "10s");
  // Limits too: `--limit memory=lots` is LIMITS_INVALID (64) before anything starts.
  const { limits } = limitSettings({ limit: opts.limit ?? [] });
  checkKlbrPython();
  // C21: `--database URL` / KLBR_DATABASE_URL, refused before anything starts when it is not a PostgreSQL URL.
  const database = databaseChoice(opts.database);
  if (database.kind === "postgres" && opts.sqliteFile !== undefined) throw new HostError("CLI_USAGE", "--sqlite-file and --database name two logs: give one");
  // `--web HOST:PORT` (C23) is checked before anything starts, like every other option.
  const webListen = opts.web === undefined ? undefined : (await import("../../web/listen")).parseListen(opts.web);
  const { serveControl } = await import("../../control/server");
  const { Host } = await import("../../runtime/host");
  const drive = await driveOption(dataDirOf(opts), opts);
  const startedAtMs = Date.now();
  if (stop.signal !== null) return stoppedBeforeStart(log, stop.signal);
  const host = await Host.start({ dataDir: dataDirOf(opts), sandbox: mode, network, drive, passEnv: opts.passEnv ?? [], limits, spares, leaseMs, log: (level, event, fields, text) => log.event(level, event, fields, text), ...(opts.sqliteFile ? { database: opts.sqliteFile } : {}), ...(database.kind === "postgres" ? { postgres: database } : {}), liveOutput: opts.liveOutput !== false, ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}), ...(opts.workspace ? { workspace: opts.workspace } : {}) });
  // Asked to stop during the start: the host is stopped without ever being reachable.
  let server;
  try {
    if (stop.signal === null) server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  } catch (error) {
    await host.stop();
    throw error;
  }
  if (server) {
    const sandbox = host.sandbox.describe();
    const isolation = sandbox.mode === "none" ? "unsandboxed" : `sandbox ${sandbox.mode}, network ${sandbox.network ? "on" : "off"}`;
    const driving = host.turns ? `, sessions driven by route ${host.turns.route.name} (${host.turns.route.model})` : ", no model route (sessions are not driven)";
    const records = database.kind === "postgres" ? `, records in ${database.shown}` : "";
    log.event("info", "serving", { data_dir: host.dataDir, socket: host.layout.controlSocket, pid: process.pid, sandbox: sandbox.mode, route: host.turns?.route.name ?? null, ...(database.kind === "postgres" ? { database: database.shown } : {}) }, `serving ${host.dataDir} on ${host.layout.controlSocket} (pid ${process.pid}, ${isolation}${driving}${records})`);
    // C18: where traces go, said once at start (export is off unless an OTLP endpoint is set).
    const traces = host.telemetry ? host.telemetry.describe() : "off (set OTEL_EXPORTER_OTLP_ENDPOINT to export traces)";
    log.event("info", "telemetry", { traces: host.telemetry?.status().endpoint ?? null }, `telemetry: ${traces}`);
  }
  const web = server && webListen ? await startWeb(host.layout, webListen, host, server) : undefined;
  const events = await followEvents(database, host.layout.database, startedAtMs, log);
  const signal = await stop.wait();
  log.event("info", "stopping", { pid: process.pid, signal }, "stopping");
  await web?.close();
  server?.close();
  await host.stop();
  await events.stop();
  log.event("info", "stopped", { pid: process.pid }, "stopped");
  return 0;
}

/**
 * The web view beside the daemon (C23): its URL with the token is the first line on stdout (the log
 * is on stderr). A web server that cannot listen stops the daemon's start, as a taken socket does.
 */
async function startWeb(
  layout: { database: string; routes: string; controlSocket: string },
  listen: { host: string; port: number },
  host: { stop(): Promise<void>; store: SessionViewsStore },
  server: { close(): void },
): Promise<{ close(): Promise<void> }> {
  const { startWebServer } = await import("../../web/server");
  try {
    const web = await startWebServer({ views: host.store, routesFile: layout.routes, controlSocket: layout.controlSocket, ...listen });
    process.stdout.write(`${web.url}\n`);
    return web;
  } catch (error) {
    server.close();
    await host.stop();
    throw error;
  }
}

/** A stop that came before the host started: nothing to stop, a clean exit all the same. */
function stoppedBeforeStart(log: ServeLog, signal: NodeJS.Signals): number {
  log.event("info", "stopping", { pid: process.pid, signal }, "stopping");
  log.event("info", "stopped", { pid: process.pid }, "stopped");
  return 0;
}

/**
 * Whether the daemon drives sessions (C10): with --route NAME, that route; else the default route
 * of routes.json when it has one; --no-drive never. A route whose key is unset stops the start.
 */
async function driveOption(dataDir: string, opts: { route?: string; drive?: boolean; maxCellsPerTurn?: string }): Promise<false | { route?: string; maxCellsPerTurn?: number }> {
  if (opts.drive === false) return false;
  const cells = opts.maxCellsPerTurn === undefined ? {} : { maxCellsPerTurn: parseMaxCells(opts.maxCellsPerTurn) };
  if (opts.route !== undefined) return { route: opts.route, ...cells };
  const { readRoutes } = await import("../../runtime/routes-file");
  const { dataLayout } = await import("../../paths");
  return readRoutes(dataLayout(dataDir).routes).default === null ? false : cells;
}

/**
 * What the daemon does, as the durable log records it (workers, activations, incidents; cells,
 * inputs and requests at debug): a reader of the database the host writes (its SQLite file
 * read-only, or its PostgreSQL database), polled every 300 ms, that reports what was written since
 * this start. A reader of its own, not the host's Store: the last poll runs after the host stopped
 * and closed that, to report what the stop itself wrote.
 */
async function followEvents(database: DatabaseChoice, file: string, sinceMs: number, log: ServeLog): Promise<{ stop: () => Promise<void> }> {
  const { readStoreOf } = await import("../read-store");
  const { store } = await readStoreOf(database, file);
  const follower = await store.followLog();
  const seen = new Set<string>();
  const report = (entries: Array<{ key: string; at_ms: number; kind: string }>, fresh: (e: { at_ms: number }) => boolean) => {
    const shown = entries.filter((e) => !seen.has(e.key) && fresh(e));
    for (const e of entries) seen.add(e.key);
    log.entries(shown as Parameters<ServeLog["entries"]>[0]);
  };
  report(await follower.poll(), (e) => e.at_ms >= sinceMs);
  // One poll at a time: the next is set when the last has answered.
  let timer: NodeJS.Timeout | undefined;
  let polling: Promise<void> = Promise.resolve();
  let stopped = false;
  const next = () => {
    timer = setTimeout(() => {
      polling = follower.poll().then((entries) => report(entries, () => true), (error: Error) => log.event("warn", "log_follow_failed", { error: error.message }, `cannot read the log: ${error.message}`));
      void polling.then(() => {
        if (!stopped) next();
      });
    }, 300);
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await polling;
      report(await follower.poll(), () => true);
      await store.close();
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
    .option("--limit <limits>", "resource limits of every worker and workspace.run tree: memory=2GiB,cpu=10m,procs=512,file=1GiB,tmp=512MiB, each optional (repeatable; default KLBR_LIMITS)", (text: string, all: string[]) => [...all, text], [] as string[])
    .option("--log-level <level>", "what to log on stderr, one line per event: error | warn | info (start, workers, activations, incidents) | debug (cells, inputs, requests)", "info")
    .option("--json", "log one JSON object per line")
    .option("--max-cells-per-turn <n>", "cells a model turn may run before it ends in a wait (C10; default 50)")
    .option("--spare <n>", "warm spare workbenches kept started for new sessions and restarts, 0 for none (C19)", "1")
    .option("--web <host:port>", "also serve the web view (C23) there, e.g. 127.0.0.1:8765; its URL with the token is the first line on stdout")
    .option("--database <url>", "keep the records in this PostgreSQL database (postgres://USER@HOST:PORT/DB; default KLBR_DATABASE_URL, else SQLite in the data directory) (C21)")
    .option("--lease <duration>", "how long this host's hold on a session lasts unrenewed (C21; 500ms to 1h, default 10s, renewed every 2s)")
    .option("--sqlite-file <file>", "keep the SQLite log in this file instead of the data directory's: hosts on one machine with their own data directories share it (C21)")
    .option("--idle-timeout <duration>", "shut down a workbench idle this long (500ms, 30s, 5m, 2h; default off); its next cell starts a new generation (C19)")
    .action(run(async (cmd) => serveCommand(optionsOf(cmd))));
}
