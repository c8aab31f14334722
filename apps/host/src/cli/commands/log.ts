import { stampOrUnknown } from "@klbr/transcript";
import type { Command } from "commander";
import { HostError } from "../../errors";
import type { DisplayRef } from "../../store/displays";
import type { LogEntry } from "../../store/log-view";
import { displayLines } from "../render-displays";
import { optionsOf, run, sessionOption, type CommonOptions } from "../command";
import { executionFilter, parseSince, requestFolder } from "../log-filters";
import { followLive } from "../log-live";
import { databaseOptions, openLogReader, type DatabaseOptions } from "../read-store";
import type { LogViewStore } from "../../store/api/log-view";

/** A model request in one line: route, the model that answered when the reply named another, outcome, bytes shared with the previous body, and the usage as the route reported it. */
function humanModelRequest(at: string, e: LogEntry): string {
  const usage = e.usage as Record<string, number> | null;
  const figures = usage
    ? ["prompt_tokens", "cached_prompt_tokens", "cache_write_tokens", "completion_tokens"].filter((k) => usage[k] !== undefined).map((k) => `${k}=${usage[k]}`).join(" ")
    : "usage=absent";
  const share = usage && usage.prompt_tokens && usage.cached_prompt_tokens !== undefined ? ` cached=${((100 * usage.cached_prompt_tokens) / usage.prompt_tokens).toFixed(1)}%` : "";
  const error = e.error ? ` error=${JSON.stringify((e.error as { code: string }).code)}` : "";
  return `${at} model.request ${String(e.id)} session=${String(e.session_id)} route=${String(e.route)} model=${JSON.stringify(e.model)}${typeof e.response_model === "string" && e.response_model !== e.model ? ` response_model=${JSON.stringify(e.response_model)}` : ""} status=${String(e.status)}${error} retries=${String(e.retries)} body_bytes=${String(e.body_bytes)} shared_prefix_bytes=${String(e.shared_prefix_bytes)} ${figures}${share}`;
}

/** A cell's displays (C20) under its line, indented: each one's text/plain and image lines. */
function humanDisplays(displays: DisplayRef[]): string {
  return displays.map((d) => displayLines(d).map((line, i) => `${i === 0 ? `  display ${d.seq}: ` : "    "}${line.split("\n").join("\n    ")}`).join("\n")).join("\n");
}

function human(entry: LogEntry): string {
  const at = stampOrUnknown(entry.at_ms);
  if (entry.kind === "model.request") return humanModelRequest(at, entry);
  const { key: _key, at_ms: _at, kind, ...rest } = entry;
  const displays = kind === "execution" && Array.isArray(rest.displays) ? (rest.displays as DisplayRef[]) : [];
  if (kind === "execution") {
    // One line per cell: its displays go on the lines under it, the count of them on its line.
    delete rest.displays;
    rest.displays = displays.length > 0 ? displays.length : null;
    if (rest.displays_dropped === 0) rest.displays_dropped = null;
  }
  const brief = Object.entries(rest)
    .filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v.length > 120 ? `${v.slice(0, 117)}...` : v) : JSON.stringify(v)}`)
    .join(" ");
  return displays.length > 0 ? `${at} ${kind} ${brief}\n${humanDisplays(displays)}` : `${at} ${kind} ${brief}`;
}

/**
 * `klbr log [--follow] [--json] [-n N] [--kind K,...] [--session S]`: the durable log, read
 * straight from the database (no daemon needed): the SQLite file, or PostgreSQL with `--database`. `--kind maintenance` shows work items and their
 * assessments, `--kind orientation` candidates and adoptions; a kind matches itself and the kinds
 * under it. `--session` keeps one session's entries.
 */
export async function logCommand(
  opts: CommonOptions & DatabaseOptions & { follow?: boolean; json?: boolean; limit?: string; kind?: string | string[]; session?: string; execution?: string; since?: string; requests?: boolean },
): Promise<number> {
  const session = sessionOption(opts.session);
  const byExecution = opts.execution !== undefined ? executionFilter(opts.execution) : (entries: LogEntry[]) => entries;
  const since = opts.since !== undefined ? parseSince(opts.since) : undefined;
  // People read one line per cell; --json (machines) and --requests keep one line per request.
  const fold = opts.json || opts.requests ? (entries: LogEntry[]) => entries : requestFolder();
  const kinds = (Array.isArray(opts.kind) ? opts.kind : opts.kind === undefined ? [] : [opts.kind]).flatMap((k) => k.split(",")).map((k) => k.trim());
  if (kinds.some((k) => k === "")) throw new HostError("CLI_USAGE", "--kind needs a kind name, e.g. --kind maintenance or --kind orientation");
  if (opts.limit !== undefined && !/^\d+$/.test(opts.limit)) {
    throw new HostError("CLI_USAGE", `-n/--limit needs a non-negative integer, got ${JSON.stringify(opts.limit)}`);
  }
  const limit = opts.limit !== undefined ? Number(opts.limit) : undefined;
  const store = await openLogReader(opts);
  try {
    await printLog(store, opts, { fold, byExecution, since, kinds, session, limit });
  } finally {
    await store.close();
  }
  return 0;
}

/** Print the log (and with --follow keep printing it until SIGINT or SIGTERM) from `store`. */
async function printLog(
  store: LogViewStore,
  opts: CommonOptions & { follow?: boolean; json?: boolean; execution?: string },
  f: { fold: (e: LogEntry[]) => LogEntry[]; byExecution: (e: LogEntry[]) => LogEntry[]; since: number | undefined; kinds: string[]; session: string | undefined; limit: number | undefined },
): Promise<void> {
  const { kindMatches } = await import("../../store/log-view");
  const { sessionFilter } = await import("../../store/log-session");
  const { fold, byExecution, since, kinds, session, limit } = f;
  // The session filter sees every entry first: it learns each execution's session from them.
  const only = session !== undefined ? sessionFilter(session) : (entries: LogEntry[]) => entries;
  const wanted = (entries: LogEntry[]) =>
    fold(byExecution(kinds.length === 0 ? only(entries) : only(entries).filter((e) => kindMatches(e.kind, kinds)))).filter((e) => since === undefined || e.at_ms >= since);
  const seen = new Set<string>();
  // Live lines of running cells (C16), from the daemon when one streams them; --kind hides them.
  const live = opts.follow && kinds.length === 0 ? await followLive(opts, { ...(session ? { session } : {}), ...(opts.execution ? { execution: opts.execution } : {}), json: opts.json === true, out: process.stdout }) : null;
  const print = (entries: LogEntry[]) => {
    for (const entry of entries) {
      if (seen.has(entry.key)) continue;
      seen.add(entry.key);
      if (entry.kind === "execution" && typeof entry.id === "string") live?.flush(entry.id);
      process.stdout.write(`${opts.json ? JSON.stringify(entry) : human(entry)}\n`);
    }
  };
  // A follower's first poll is the whole log, as readLog; later polls read only what may be new.
  const follower = opts.follow ? await store.followLog() : undefined;
  const all = wanted(follower ? await follower.poll() : await store.readLog());
  if (limit !== undefined) for (const e of all.slice(0, Math.max(0, all.length - limit))) seen.add(e.key);
  print(all);
  if (!follower) return;
  let stopped = false;
  let wake: () => void = () => {};
  let timer: NodeJS.Timeout | undefined;
  const end = () => {
    stopped = true;
    clearTimeout(timer);
    wake();
  };
  process.once("SIGINT", end);
  process.once("SIGTERM", end);
  // One poll at a time (on PostgreSQL a poll is a round trip per table), 300 ms apart.
  while (!stopped) {
    await new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, 300);
    });
    if (!stopped) print(wanted(await follower.poll()));
  }
  live?.close();
}

/** Register `klbr log`. */
export function register(program: Command): void {
  const log = program
    .command("log")
    .description("print the durable log")
    .option("--follow", "keep printing new entries, and live output lines of running cells (marked live) while a daemon streams them")
    .option("--json", "one JSON object per line")
    .option("-n, --limit <n>", "only the last n entries")
    .option("--kind <kinds>", "only these kinds, comma-separated (maintenance, orientation, execution, ...)")
    .option("-s, --session <id>", "only this session's entries (its cells, their requests and waits, its inputs, its peers and peer requests)")
    .option("--execution <id>", "only this cell and the rows that name it (its requests, waits, effects)")
    .option("--since <when>", "only entries since a duration ago (90s, 10m, 2h, 3d), an ISO date or time, or epoch ms")
    .option("--requests", "print host request rows as lines of their own (by default a cell's line lists its requests; --json always keeps them)");
  databaseOptions(log).action(run(async (cmd) => logCommand(optionsOf(cmd))));
}
