// Read-only views of the durable log for the surfaces (the web page, C23; reached through the Store): the sessions and one
// session's requests, cells and frontiers, a page at a time. Plain SQL over a read-only
// connection; every query is bounded by a page size or aggregates in SQLite, so a session of
// 10,000 records costs about what one of 100 does.
import type Database from "better-sqlite3";
import { costOf, type UsageCounts, type UsagePrices } from "@klbr/usage";
import { UsageLedger, type RouteSums } from "./usage-ledger";
import type { CellView, DisplayView, FrontierView, Page, RequestSummary, SessionSummary, UsageTotals } from "./view-shapes";

export type { CellView, DisplayView, FrontierView, Page, RequestSummary, SessionSummary, UsageTotals } from "./view-shapes";

/** The prices of each route by name (routes.json, C23); a route with none has no cost. */
export type PriceBook = ReadonlyMap<string, UsagePrices>;

/** Totals of one session's (or a group's) rows by route; cost is linear, so pricing the sums prices each request. */
export function totalsOf(rows: RouteSums[], prices: PriceBook): UsageTotals {
  const totals: UsageTotals = { requests: 0, prompt_tokens: 0, completion_tokens: 0, cached_prompt_tokens: 0, cache_write_tokens: 0, requests_without_usage: 0, cost_usd: null, cost_by_route: [] };
  for (const r of rows) {
    totals.requests += r.n;
    totals.prompt_tokens += r.prompt;
    totals.completion_tokens += r.completion;
    totals.cached_prompt_tokens += r.cached;
    totals.cache_write_tokens += r.written;
    totals.requests_without_usage += r.no_usage;
    const cost = r.billable > 0 ? costOf({ uncached_prompt_tokens: r.b_input, cached_prompt_tokens: r.b_read, cache_write_tokens: r.b_write, completion_tokens: r.b_output }, prices.get(r.route)) : null;
    totals.cost_by_route.push({ route: r.route, requests: r.n, cost });
    if (cost) totals.cost_usd = (totals.cost_usd ?? 0) + cost.usd;
  }
  return totals;
}

const statements = new WeakMap<Database.Database, ReturnType<typeof prepare>>();

function prepare(sqlite: Database.Database) {
  return {
    ledger: new UsageLedger(sqlite),
    // The distinct session ids of each table by skip-scan: one index seek per session, never a
    // read of every entry (a session of 10,000 cells has 10,000 of them).
    sessionIds: ["executions", "transcript_records", "events", "model_requests", "leases"].map((table) =>
      sqlite.prepare(
        `WITH RECURSIVE ids(id) AS (SELECT min(session_id) FROM ${table} UNION ALL SELECT (SELECT min(session_id) FROM ${table} WHERE session_id > ids.id) FROM ids WHERE ids.id IS NOT NULL)
         SELECT id FROM ids WHERE id IS NOT NULL`,
      ),
    ),
    running: sqlite.prepare("SELECT session_id, count(*) AS n FROM executions WHERE status = 'running' GROUP BY session_id"),
    holders: sqlite.prepare("SELECT session_id, host_id FROM leases WHERE host_id IS NOT NULL"),
    holderOne: sqlite.prepare("SELECT host_id FROM leases WHERE session_id = ? AND host_id IS NOT NULL"),
    // The newest row of each kind, found from the end of an index rather than by reading them all.
    lastCell: sqlite.prepare("SELECT generation, coalesce(ended_at_ms, started_at_ms) AS at FROM executions WHERE session_id = ? ORDER BY started_at_ms DESC, rowid DESC LIMIT 1"),
    lastReset: sqlite.prepare("SELECT generation, at_ms AS at FROM kernel_resets WHERE session_id = ? ORDER BY id DESC LIMIT 1"),
    lastRequest: sqlite.prepare("SELECT coalesce(ended_at_ms, started_at_ms) AS at FROM model_requests WHERE session_id = ? ORDER BY started_at_ms DESC, rowid DESC LIMIT 1"),
    lastEvent: sqlite.prepare("SELECT received_at_ms AS at FROM events WHERE id = (SELECT max(id) FROM events WHERE session_id = ?)"),
    lastRecord: sqlite.prepare("SELECT at_ms AS at FROM transcript_records WHERE session_id = ? ORDER BY seq DESC LIMIT 1"),
    requestCount: sqlite.prepare("SELECT count(*) AS n FROM model_requests WHERE session_id = ?"),
    // Ordered as the index is (session_id, started_at_ms, then rowid): a page is read, not sorted.
    requestPage: sqlite.prepare(
      "SELECT * FROM model_requests WHERE rowid IN (SELECT rowid FROM model_requests WHERE session_id = ? ORDER BY started_at_ms, rowid LIMIT ? OFFSET ?) ORDER BY started_at_ms, rowid",
    ),
    cellRefs: sqlite.prepare(
      `SELECT ref, request_id FROM transcript_records WHERE session_id = ? AND kind = 'cell' AND seq > ?
       AND request_id IN (SELECT value FROM json_each(?)) ORDER BY seq`,
    ),
    cellCount: sqlite.prepare("SELECT count(*) AS n FROM executions WHERE session_id = ?"),
    // By the status index (+session_id keeps the planner off the session's 10,000 rows): few cells run.
    runningOne: sqlite.prepare("SELECT count(*) AS n FROM executions WHERE status = 'running' AND +session_id = ?"),
    // The page's rowids from the covering index, then only those rows: skipped rows are never read.
    cellPage: sqlite.prepare(
      "SELECT * FROM executions WHERE rowid IN (SELECT rowid FROM executions WHERE session_id = ? ORDER BY started_at_ms, rowid LIMIT ? OFFSET ?) ORDER BY started_at_ms, rowid",
    ),
    cell: sqlite.prepare("SELECT * FROM executions WHERE id = ?"),
    cellRequest: sqlite.prepare("SELECT request_id FROM transcript_records WHERE kind = 'cell' AND ref = ?"),
    frontiers: sqlite.prepare("SELECT * FROM frontiers WHERE session_id = ? ORDER BY created_at_ms, id"),
  };
}

function stmts(sqlite: Database.Database) {
  let s = statements.get(sqlite);
  if (!s) statements.set(sqlite, (s = prepare(sqlite)));
  return s;
}

type Statements = ReturnType<typeof prepare>;

/** A session's newest generation (of a cell or a kernel reset) and the time of its newest record. */
function latest(s: Statements, id: string): { generation: string | null; at: number | null } {
  const cell = s.lastCell.get(id) as { generation: string; at: number } | undefined;
  const reset = s.lastReset.get(id) as { generation: string; at: number } | undefined;
  return latestOf(cell, reset, [s.lastRequest, s.lastEvent, s.lastRecord].map((q) => (q.get(id) as { at: number } | undefined)?.at));
}

/** The newest generation (a reset newer than the newest cell wins) and the newest of all the times. */
export function latestOf(cell: { generation: string; at: number } | undefined, reset: { generation: string; at: number } | undefined, others: Array<number | null | undefined>): { generation: string | null; at: number | null } {
  const generation = (reset && (!cell || reset.at > cell.at) ? reset : cell)?.generation ?? null;
  const times = [cell?.at, reset?.at, ...others].filter((t): t is number => typeof t === "number");
  return { generation, at: times.length === 0 ? null : Math.max(...times) };
}

/** Sessions newest activity first, then by id. */
export const byActivity = (a: SessionSummary, b: SessionSummary): number => (b.last_activity_ms ?? 0) - (a.last_activity_ms ?? 0) || (a.session_id < b.session_id ? -1 : 1);

function summaryOf(s: Statements, id: string, holder: string | null, running: number, prices: PriceBook): SessionSummary {
  const { generation, at } = latest(s, id);
  return {
    session_id: id,
    generation,
    holder_host: holder,
    last_activity_ms: at,
    cells: (s.cellCount.get(id) as { n: number }).n,
    running_cells: running,
    ...totalsOf(s.ledger.session(id), prices),
  };
}

/** Every session the log knows, newest activity first, with its totals. */
export function listSessions(sqlite: Database.Database, prices: PriceBook): SessionSummary[] {
  const s = stmts(sqlite);
  s.ledger.refresh();
  const ids = [...new Set(s.sessionIds.flatMap((q) => (q.all() as Array<{ id: string }>).map((r) => r.id)))];
  const running = new Map((s.running.all() as Array<{ session_id: string; n: number }>).map((r) => [r.session_id, r.n]));
  const holders = new Map((s.holders.all() as Array<{ session_id: string; host_id: string }>).map((r) => [r.session_id, r.host_id]));
  const rows = ids.map((id) => summaryOf(s, id, holders.get(id) ?? null, running.get(id) ?? 0, prices));
  return rows.sort(byActivity);
}

/** One session's summary (as a row of the sessions page), or null when the log has nothing of it. */
export function sessionSummary(sqlite: Database.Database, sessionId: string, prices: PriceBook): SessionSummary | null {
  const s = stmts(sqlite);
  s.ledger.refresh();
  const holder = (s.holderOne.get(sessionId) as { host_id: string } | undefined)?.host_id ?? null;
  const summary = summaryOf(s, sessionId, holder, (s.runningOne.get(sessionId) as { n: number }).n, prices);
  if (summary.cells === 0 && summary.last_activity_ms === null && holder === null) return null;
  return summary;
}

/** Which page to show: `requested` when it is one, else the last (newest) page. */
export function pageOf(total: number, size: number, requested: number | undefined): { page: number; pages: number; offset: number } {
  const pages = Math.max(1, Math.ceil(total / size));
  const page = requested !== undefined && Number.isSafeInteger(requested) && requested >= 1 && requested <= pages ? requested : pages;
  return { page, pages, offset: (page - 1) * size };
}

const json = <T>(v: unknown): T | null => (typeof v === "string" ? (JSON.parse(v) as T) : null);

/** The share of the prompt read from cache, when the route reported both. */
function cacheShare(u: UsageCounts | null): number | null {
  if (!u || u.cached_prompt_tokens === undefined) return null;
  const prompt = u.prompt_tokens ?? (u.uncached_prompt_tokens === undefined ? undefined : u.uncached_prompt_tokens + u.cached_prompt_tokens + (u.cache_write_tokens ?? 0));
  return prompt ? u.cached_prompt_tokens / prompt : null;
}

/** The counts of a usage record, without its raw objects (the page needs the numbers only). */
function countsOf(usage: Record<string, unknown> | null): UsageCounts | null {
  if (!usage) return null;
  const { raw: _raw, flags: _flags, shape: _shape, ...counts } = usage;
  return counts as UsageCounts;
}

/** A page of a session's model requests in the order they were made (default: the newest page). */
export function requestPage(sqlite: Database.Database, sessionId: string, prices: PriceBook, opts: { page?: number; pageSize?: number } = {}): Page<RequestSummary> {
  const s = stmts(sqlite);
  const size = opts.pageSize ?? 50;
  const total = (s.requestCount.get(sessionId) as { n: number }).n;
  const { page, pages, offset } = pageOf(total, size, opts.page);
  const rows = s.requestPage.all(sessionId, size, offset) as Array<Record<string, unknown>>;
  // The cells each reply called: transcript cell records between the first and last request of the page.
  const cells = new Map<string, string[]>();
  if (rows.length > 0) {
    const from = Math.min(...rows.map((r) => r.through_seq as number));
    for (const r of s.cellRefs.all(sessionId, from, JSON.stringify(rows.map((r) => r.id))) as Array<{ ref: string; request_id: string | null }>) {
      if (r.request_id) cells.set(r.request_id, [...(cells.get(r.request_id) ?? []), r.ref]);
    }
  }
  const items = rows.map((r) => requestSummaryOf(r, cells, prices));
  return { items, page, pages, total, page_size: size };
}

/** A model_requests row (SQLite's shape: JSON as text) as the page lists it, with the cells its reply called. */
export function requestSummaryOf(r: Record<string, unknown>, cells: ReadonlyMap<string, string[]>, prices: PriceBook): RequestSummary {
  const usage = countsOf(json(r.usage));
  return {
    id: r.id as string,
    turn_id: r.turn_id as string,
    route: r.route as string,
    model: r.model as string,
    response_model: (r.response_model as string | null) ?? null,
    status: r.status as string,
    error: json(r.error),
    retries: r.retries as number,
    body_bytes: r.body_bytes as number,
    shared_prefix_bytes: r.shared_prefix_bytes as number,
    header_record_id: r.header_record_id as number,
    frontier_id: (r.frontier_id as string | null) ?? null,
    through_seq: r.through_seq as number,
    started_at_ms: r.started_at_ms as number,
    ended_at_ms: (r.ended_at_ms as number | null) ?? null,
    usage,
    cache_share: cacheShare(usage),
    cost: costOf(usage, prices.get(r.route as string)),
    reply: json(r.reply),
    cells: cells.get(r.id as string) ?? [],
  };
}

export function cellOf(r: Record<string, unknown>, requestId: string | null): CellView {
  return {
    id: r.id as string,
    session_id: r.session_id as string,
    generation: r.generation as string,
    code: r.code as string,
    status: r.status as string,
    output: json<CellView["output"]>(r.output) ?? [],
    truncated_bytes: (r.truncated_bytes as number | null) ?? null,
    error: (r.error as string | null) ?? null,
    ended_by: (r.ended_by as string | null) ?? null,
    started_at_ms: r.started_at_ms as number,
    ended_at_ms: (r.ended_at_ms as number | null) ?? null,
    cpu_ms: (r.cpu_ms as number | null) ?? null,
    peak_rss_bytes: (r.peak_rss_bytes as number | null) ?? null,
    request_id: requestId,
    origin: (r.origin as string | null | undefined) ?? null,
    displays: json<DisplayView[]>(r.displays) ?? [],
    displays_dropped: (r.displays_dropped as number | null | undefined) ?? null,
  };
}

/** A page of a session's cells in the order they started (default: the newest page). */
export function cellPage(sqlite: Database.Database, sessionId: string, opts: { page?: number; pageSize?: number } = {}): Page<CellView> {
  const s = stmts(sqlite);
  const size = opts.pageSize ?? 50;
  const total = (s.cellCount.get(sessionId) as { n: number }).n;
  const { page, pages, offset } = pageOf(total, size, opts.page);
  const rows = s.cellPage.all(sessionId, size, offset) as Array<Record<string, unknown>>;
  const items = rows.map((r) => cellOf(r, (s.cellRequest.get(r.id) as { request_id: string | null } | undefined)?.request_id ?? null));
  return { items, page, pages, total, page_size: size };
}

/** One cell by execution id, or null. */
export function cellView(sqlite: Database.Database, executionId: string): CellView | null {
  const s = stmts(sqlite);
  const r = s.cell.get(executionId) as Record<string, unknown> | undefined;
  return r ? cellOf(r, (s.cellRequest.get(executionId) as { request_id: string | null } | undefined)?.request_id ?? null) : null;
}

/** A session's frontiers (its folds), oldest first. */
export function frontierList(sqlite: Database.Database, sessionId: string): FrontierView[] {
  return (stmts(sqlite).frontiers.all(sessionId) as Array<Record<string, unknown>>).map(frontierOf);
}

/** A frontiers row as the page shows it. */
export function frontierOf(f: Record<string, unknown>): FrontierView {
  return {
    id: f.id as string,
    covers_through: f.covers_through as number,
    reason: f.reason as string,
    block: f.block as string,
    execution_id: (f.execution_id as string | null) ?? null,
    created_at_ms: f.created_at_ms as number,
    installed_at_ms: (f.installed_at_ms as number | null) ?? null,
  };
}

/**
 * A display's image (C20) by its full digest: its media type and bytes, or null. Only images: a
 * bundle (which may hold text/html) is never served for a browser to render.
 */
export function displayImage(sqlite: Database.Database, digest: string): { media_type: string; data: Buffer } | null {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return null;
  let image = imageStatements.get(sqlite);
  if (image === undefined) {
    try {
      image = sqlite.prepare("SELECT media_type, data FROM blobs WHERE digest = ? AND media_type IN ('image/png', 'image/jpeg')");
    } catch {
      image = null; // a log from before C20 has no blobs table
    }
    imageStatements.set(sqlite, image);
  }
  return (image?.get(digest) as { media_type: string; data: Buffer } | undefined) ?? null;
}

const imageStatements = new WeakMap<Database.Database, Database.Statement | null>();
