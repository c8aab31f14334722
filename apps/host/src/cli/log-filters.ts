import { HostError } from "../errors";
import type { LogEntry } from "../store/log-view";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a duration back from now (`90s`, `10m`, `2h`, `3d`), an ISO date or time, or epoch milliseconds. */
export function parseSince(value: string, nowMs: number = Date.now()): number {
  const duration = /^(\d+)(ms|s|m|h|d)$/.exec(value);
  if (duration) return nowMs - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  if (/^\d{10,}$/.test(value)) return Number(value);
  const at = /^\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new HostError("CLI_USAGE", `--since needs a duration (90s, 10m, 2h, 3d), an ISO date or time, or epoch ms, got ${JSON.stringify(value)}`);
  return at;
}

/** `--execution ID`: that cell's row and every row that names it (its requests, waits, effects). */
export function executionFilter(id: string): (entries: LogEntry[]) => LogEntry[] {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(id)) throw new HostError("CLI_USAGE", `--execution must be an execution id, got ${JSON.stringify(id)}`);
  return (entries) => entries.filter((e) => (e.kind === "execution" && e.id === id) || e.execution_id === id);
}

/**
 * Folds host request rows under their cell for people: a cell's line carries `requests=[method,
 * ...]` (in request order; `!` marks a refused one) instead of one line per request. Requests are
 * remembered across a follower's batches, so a cell reprinted when it ends lists them all; a
 * request whose cell is not in the log stays a line of its own.
 */
export function requestFolder(): (entries: LogEntry[]) => LogEntry[] {
  const byExecution = new Map<string, Map<string, string>>();
  const executions = new Set<string>();
  return (entries) => {
    for (const e of entries) if (e.kind === "execution" && typeof e.id === "string") executions.add(e.id);
    const out: LogEntry[] = [];
    for (const e of entries) {
      if (e.kind === "request" && typeof e.execution_id === "string" && executions.has(e.execution_id)) {
        const reply = e.reply as { ok?: boolean } | null;
        const requests = byExecution.get(e.execution_id) ?? new Map<string, string>();
        requests.set(String(e.request_id), `${String(e.method)}${reply && reply.ok === false ? "!" : ""}`);
        byExecution.set(e.execution_id, requests);
        continue;
      }
      out.push(e);
    }
    return out.map((e) => {
      const requests = e.kind === "execution" && typeof e.id === "string" ? byExecution.get(e.id) : undefined;
      return requests ? { ...e, requests: [...requests.values()] } : e;
    });
  };
}
