// Token totals of every session's model requests by route, kept up to date incrementally: a
// request's usage is written once, when it closes (finishModelRequest, failModelRequest, or a
// restart's closeRunningModelRequests), and rows are never removed. So each read takes only the
// rows added since the last one and those still running then, and a page of a 10,000-request
// session does not re-read 10,000 usage records.
import type Database from "better-sqlite3";

/** Sums of one session's requests on one route. */
export interface RouteSums {
  route: string;
  n: number;
  no_usage: number;
  prompt: number;
  completion: number;
  cached: number;
  written: number;
  /** Requests with the counts a cost needs (a completion count and a prompt or uncached count). */
  billable: number;
  /** Of the billable ones: tokens billed as plain input, cache reads and writes, output. */
  b_input: number;
  b_read: number;
  b_write: number;
  b_output: number;
}

type Row = { rowid: number; session_id: string; route: string; status: string; has_usage: number; p: number | null; c: number | null; cr: number | null; cw: number | null; u: number | null };

const SELECT = `SELECT rowid, session_id, route, status, usage IS NOT NULL AS has_usage, usage ->> '$.prompt_tokens' AS p, usage ->> '$.completion_tokens' AS c,
  usage ->> '$.cached_prompt_tokens' AS cr, usage ->> '$.cache_write_tokens' AS cw, usage ->> '$.uncached_prompt_tokens' AS u FROM model_requests`;

/** The running totals over one read-only connection. */
export class UsageLedger {
  /** Rows up to here (by rowid) have been read. */
  private watermark = 0;
  /** Rows read while still running: read again until they close. */
  private readonly open = new Set<number>();
  private readonly sums = new Map<string, Map<string, RouteSums>>();
  /** The routes of each session's running requests, as of the last read. */
  private running = new Map<string, string[]>();
  private readonly after: Database.Statement;
  private readonly byId: Database.Statement;

  constructor(private readonly sqlite: Database.Database) {
    this.after = sqlite.prepare(`${SELECT} WHERE rowid > ? ORDER BY rowid`);
    this.byId = sqlite.prepare(`${SELECT} WHERE rowid = ?`);
  }

  /** Take in what changed since the last read. */
  refresh(): void {
    const reopened = [...this.open].map((id) => this.byId.get(id) as Row | undefined);
    for (const row of reopened) if (row && row.status !== "running") this.add(row);
    for (const row of this.after.all(this.watermark) as Row[]) {
      this.watermark = row.rowid;
      if (row.status === "running") this.open.add(row.rowid);
      else this.add(row);
    }
    // Running rows still count as requests (their usage comes later).
    this.running = new Map();
    for (const id of this.open) {
      const row = this.byId.get(id) as Row | undefined;
      if (row) this.running.set(row.session_id, [...(this.running.get(row.session_id) ?? []), row.route]);
    }
  }

  /** One session's sums by route (running requests counted, their tokens not yet). */
  session(sessionId: string): RouteSums[] {
    const closed = this.sums.get(sessionId) ?? new Map<string, RouteSums>();
    const out = new Map([...closed].map(([route, s]) => [route, { ...s }]));
    for (const route of this.running.get(sessionId) ?? []) {
      const s = out.get(route) ?? empty(route);
      s.n += 1;
      s.no_usage += 1;
      out.set(route, s);
    }
    return [...out.values()];
  }

  private add(row: Row): void {
    this.open.delete(row.rowid);
    let routes = this.sums.get(row.session_id);
    if (!routes) this.sums.set(row.session_id, (routes = new Map()));
    let s = routes.get(row.route);
    if (!s) routes.set(row.route, (s = empty(row.route)));
    s.n += 1;
    if (!row.has_usage) {
      s.no_usage += 1;
      return;
    }
    const read = row.cr ?? 0;
    const write = row.cw ?? 0;
    s.prompt += row.p ?? (row.u === null ? 0 : row.u + read + write);
    s.completion += row.c ?? 0;
    s.cached += read;
    s.written += write;
    if (row.c !== null && (row.u !== null || row.p !== null)) {
      s.billable += 1;
      s.b_input += row.u ?? Math.max(0, row.p! - read - write);
      s.b_read += read;
      s.b_write += write;
      s.b_output += row.c;
    }
  }
}

function empty(route: string): RouteSums {
  return { route, n: 0, no_usage: 0, prompt: 0, completion: 0, cached: 0, written: 0, billable: 0, b_input: 0, b_read: 0, b_write: 0, b_output: 0 };
}
