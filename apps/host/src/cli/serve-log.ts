import { stampOrUnknown } from "@klbr/transcript";
import { HostError } from "../errors";
import type { LogEntry } from "../store/log-view";

/** `klbr serve --log-level`: most severe first; a level shows itself and everything above it. */
export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
/** One of LOG_LEVELS. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Check a --log-level value (a usage error names it and the choices). */
export function parseLogLevel(value: string | undefined): LogLevel {
  const level = (value ?? "info").toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new HostError("CLI_USAGE", `--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(value)}`);
  return level as LogLevel;
}

/** The level a durable log entry is reported at: incidents warn; workers, activations and sessions are info; the rest is debug. */
export function levelOfEntry(entry: LogEntry): LogLevel {
  if (entry.kind.startsWith("incident.")) return /fail|crash|lost|error/.test(entry.kind) ? "error" : "warn";
  if (entry.kind === "kernel.reset" || entry.kind === "activation" || entry.kind.startsWith("session") || entry.kind.startsWith("peer")) return "info";
  return "debug";
}

/** What `klbr serve` says, one line per event on stderr: `klbr: ...` for people, one JSON object with --json. */
export class ServeLog {
  private readonly rank: number;

  constructor(
    level: LogLevel,
    private readonly json: boolean,
    private readonly out: NodeJS.WritableStream = process.stderr,
    private readonly now: () => number = Date.now,
  ) {
    this.rank = LOG_LEVELS.indexOf(level);
  }

  /** A lifecycle event of the daemon itself (serving, stopping, stopped); `text` is the human line after `klbr: `. */
  event(level: LogLevel, event: string, fields: Record<string, unknown>, text: string): void {
    if (LOG_LEVELS.indexOf(level) > this.rank) return;
    this.out.write(this.json ? `${JSON.stringify({ at: stampOrUnknown(this.now()), level, event, ...fields })}\n` : `klbr: ${text}\n`);
  }

  /** Durable log entries as the host writes them (workers, activations, incidents, cells at debug). */
  entries(entries: LogEntry[]): void {
    for (const entry of entries) {
      const level = levelOfEntry(entry);
      if (LOG_LEVELS.indexOf(level) > this.rank) continue;
      const { key: _key, at_ms, kind, ...rest } = entry;
      if (this.json) {
        this.out.write(`${JSON.stringify({ at: stampOrUnknown(at_ms), level, event: kind, ...rest })}\n`);
        continue;
      }
      const brief = Object.entries(rest)
        .filter(([, v]) => v !== null && v !== undefined && v !== "")
        .map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v.length > 120 ? `${v.slice(0, 117)}...` : v) : JSON.stringify(v)}`)
        .join(" ");
      this.out.write(`klbr: [${level}] ${stampOrUnknown(at_ms)} ${kind}${brief ? ` ${brief}` : ""}\n`);
    }
  }
}
