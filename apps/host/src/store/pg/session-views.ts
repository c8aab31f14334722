// The surfaces' session views over PostgreSQL (C21, C23): the same answers as store/session-views.ts
// and request-view.ts, from rows read in SQLite's shape (row-shape.ts) and mapped by the same
// functions. SQLite keeps a usage ledger per connection because it sums in JavaScript; here the
// sums are one GROUP BY, so nothing is kept between reads.
import { and, asc, eq, sql } from "drizzle-orm";
import { blobs, executions, frontiers, modelRequests } from "../../db/pg-schema";
import type { SessionViewsStore } from "../api/session-views";
import type { TranscriptStore } from "../api/transcript";
import { requestViewOf } from "../request-view";
import { byActivity, cellOf, frontierOf, latestOf, pageOf, requestSummaryOf, totalsOf, type PriceBook, type SessionSummary } from "../session-views";
import type { RouteSums } from "../usage-ledger";
import type { PgContext } from "./context";
import { sqliteShaped } from "./row-shape";

// Each session's sums by route, with SQLite's ledger's rules (usage-ledger.ts): a running request
// counts as a request without usage; tokens come from closed requests with a usage record; a cost
// needs a completion count and a prompt or uncached count.
const SUMS = `WITH r AS (
  SELECT session_id, route, started_at_ms, status <> 'running' AND usage IS NOT NULL AS counted,
    (usage ->> 'prompt_tokens')::float8 AS p, (usage ->> 'completion_tokens')::float8 AS c,
    coalesce((usage ->> 'cached_prompt_tokens')::float8, 0) AS cr, coalesce((usage ->> 'cache_write_tokens')::float8, 0) AS cw,
    (usage ->> 'uncached_prompt_tokens')::float8 AS u
  FROM model_requests WHERE session_id = ANY($1::text[])
), b AS (SELECT *, counted AND c IS NOT NULL AND (u IS NOT NULL OR p IS NOT NULL) AS billable FROM r)
SELECT session_id, route, count(*) AS n, count(*) FILTER (WHERE NOT counted) AS no_usage,
  coalesce(sum(coalesce(p, u + cr + cw, 0)) FILTER (WHERE counted), 0) AS prompt,
  coalesce(sum(coalesce(c, 0)) FILTER (WHERE counted), 0) AS completion,
  coalesce(sum(cr) FILTER (WHERE counted), 0) AS cached, coalesce(sum(cw) FILTER (WHERE counted), 0) AS written,
  count(*) FILTER (WHERE billable) AS billable,
  coalesce(sum(coalesce(u, greatest(0, p - cr - cw))) FILTER (WHERE billable), 0) AS b_input,
  coalesce(sum(cr) FILTER (WHERE billable), 0) AS b_read, coalesce(sum(cw) FILTER (WHERE billable), 0) AS b_write,
  coalesce(sum(c) FILTER (WHERE billable), 0) AS b_output
FROM b GROUP BY session_id, route ORDER BY session_id, min(started_at_ms), route`;

// Per session, in one statement: its newest cell and reset (generation and time), the times of its
// newest request, event and transcript record, its cells, running cells and lease holder.
const SUMMARIES = `SELECT s.id,
  (SELECT generation FROM executions WHERE session_id = s.id ORDER BY started_at_ms DESC, id DESC LIMIT 1) AS cell_generation,
  (SELECT coalesce(ended_at_ms, started_at_ms) FROM executions WHERE session_id = s.id ORDER BY started_at_ms DESC, id DESC LIMIT 1) AS cell_at,
  (SELECT generation FROM kernel_resets WHERE session_id = s.id ORDER BY id DESC LIMIT 1) AS reset_generation,
  (SELECT at_ms FROM kernel_resets WHERE session_id = s.id ORDER BY id DESC LIMIT 1) AS reset_at,
  (SELECT coalesce(ended_at_ms, started_at_ms) FROM model_requests WHERE session_id = s.id ORDER BY started_at_ms DESC, id DESC LIMIT 1) AS request_at,
  (SELECT received_at_ms FROM events WHERE session_id = s.id ORDER BY id DESC LIMIT 1) AS event_at,
  (SELECT at_ms FROM transcript_records WHERE session_id = s.id ORDER BY seq DESC LIMIT 1) AS record_at,
  (SELECT count(*) FROM executions WHERE session_id = s.id) AS cells,
  (SELECT count(*) FROM executions WHERE session_id = s.id AND status = 'running') AS running,
  (SELECT host_id FROM leases WHERE session_id = s.id AND host_id IS NOT NULL) AS holder
FROM unnest($1::text[]) AS s(id)`;

const SESSION_IDS = ["executions", "transcript_records", "events", "model_requests", "leases"].map((t) => `SELECT session_id FROM ${t}`).join(" UNION ");

type SummaryRow = {
  id: string;
  cell_generation: string | null;
  cell_at: number | null;
  reset_generation: string | null;
  reset_at: number | null;
  request_at: number | null;
  event_at: number | null;
  record_at: number | null;
  cells: number;
  running: number;
  holder: string | null;
};

/** SessionViewsStore over PostgreSQL; the request view reads the transcript through `transcript`. */
export function pgSessionViews(c: PgContext, transcript: Pick<TranscriptStore, "loadTranscript">): SessionViewsStore {
  const summaries = async (ids: string[], prices: PriceBook): Promise<SessionSummary[]> => {
    if (ids.length === 0) return [];
    const [rows, sums] = await Promise.all([c.read((db) => c.rows<SummaryRow>(db, SUMMARIES, [ids])), c.read((db) => c.rows<RouteSums & { session_id: string }>(db, SUMS, [ids]))]);
    const bySession = new Map<string, RouteSums[]>();
    for (const { session_id, ...s } of sums) bySession.set(session_id, [...(bySession.get(session_id) ?? []), s]);
    return rows.map((r) => {
      const cell = r.cell_generation === null ? undefined : { generation: r.cell_generation, at: r.cell_at! };
      const reset = r.reset_generation === null ? undefined : { generation: r.reset_generation, at: r.reset_at! };
      const { generation, at } = latestOf(cell, reset, [r.request_at, r.event_at, r.record_at]);
      return { session_id: r.id, generation, holder_host: r.holder, last_activity_ms: at, cells: r.cells, running_cells: r.running, ...totalsOf(bySession.get(r.id) ?? [], prices) };
    });
  };
  // The model request whose reply called each cell (its transcript cell record's), one statement for a page.
  const cellRequests = async (executionIds: string[]): Promise<Map<string, string | null>> => {
    const rows = await c.read((db) => c.rows<{ ref: string; request_id: string | null }>(db, "SELECT DISTINCT ON (ref) ref, request_id FROM transcript_records WHERE kind = 'cell' AND ref = ANY($1::text[]) ORDER BY ref, seq", [executionIds]));
    return new Map(rows.map((r) => [r.ref, r.request_id]));
  };
  const count = async (text: string, sessionId: string): Promise<number> => (await c.read((db) => c.rows<{ n: number }>(db, text, [sessionId])))[0]!.n;

  return {
    listSessions: async (prices) => {
      const ids = (await c.read((db) => c.rows<{ session_id: string }>(db, SESSION_IDS))).map((r) => r.session_id);
      return (await summaries(ids, prices)).sort(byActivity);
    },
    sessionSummary: async (sessionId, prices) => {
      const [summary] = await summaries([sessionId], prices);
      if (!summary || (summary.cells === 0 && summary.last_activity_ms === null && summary.holder_host === null)) return null;
      return summary;
    },
    requestPage: async (sessionId, prices, opts = {}) => {
      const size = opts.pageSize ?? 50;
      const total = await count("SELECT count(*) AS n FROM model_requests WHERE session_id = $1", sessionId);
      const { page, pages, offset } = pageOf(total, size, opts.page);
      const rows = (await c.read((db) =>
        db.select(sqliteShaped(modelRequests)).from(modelRequests).where(eq(modelRequests.sessionId, sessionId)).orderBy(asc(modelRequests.startedAtMs), asc(modelRequests.id)).limit(size).offset(offset),
      )) as Array<Record<string, unknown>>;
      // The cells each reply called: transcript cell records from the page's first request on.
      const cells = new Map<string, string[]>();
      if (rows.length > 0) {
        const from = Math.min(...rows.map((r) => r.through_seq as number));
        const refs = await c.read((db) =>
          c.rows<{ ref: string; request_id: string | null }>(db, "SELECT ref, request_id FROM transcript_records WHERE session_id = $1 AND kind = 'cell' AND seq > $2 AND request_id = ANY($3::text[]) ORDER BY seq", [sessionId, from, rows.map((r) => r.id)]),
        );
        for (const r of refs) if (r.request_id) cells.set(r.request_id, [...(cells.get(r.request_id) ?? []), r.ref]);
      }
      return { items: rows.map((r) => requestSummaryOf(r, cells, prices)), page, pages, total, page_size: size };
    },
    cellPage: async (sessionId, opts = {}) => {
      const size = opts.pageSize ?? 50;
      const total = await count("SELECT count(*) AS n FROM executions WHERE session_id = $1", sessionId);
      const { page, pages, offset } = pageOf(total, size, opts.page);
      const rows = (await c.read((db) =>
        db.select(sqliteShaped(executions)).from(executions).where(eq(executions.sessionId, sessionId)).orderBy(asc(executions.startedAtMs), asc(executions.id)).limit(size).offset(offset),
      )) as Array<Record<string, unknown>>;
      const requests = rows.length === 0 ? new Map<string, string | null>() : await cellRequests(rows.map((r) => r.id as string));
      const items = rows.map((r) => cellOf(r, requests.get(r.id as string) ?? null));
      return { items, page, pages, total, page_size: size };
    },
    cellView: async (executionId) => {
      const [r] = (await c.read((db) => db.select(sqliteShaped(executions)).from(executions).where(eq(executions.id, executionId)))) as Array<Record<string, unknown>>;
      return r ? cellOf(r, (await cellRequests([executionId])).get(executionId) ?? null) : null;
    },
    frontierList: async (sessionId) =>
      ((await c.read((db) => db.select(sqliteShaped(frontiers)).from(frontiers).where(eq(frontiers.sessionId, sessionId)).orderBy(asc(frontiers.createdAtMs), asc(frontiers.id)))) as Array<Record<string, unknown>>).map(
        frontierOf,
      ),
    displayImage: async (digest) => {
      // Only images, never a bundle (which may hold text/html): as the SQLite view.
      if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return null;
      const [r] = await c.read((db) =>
        db.select({ media_type: blobs.mediaType, data: blobs.data }).from(blobs).where(and(eq(blobs.digest, digest), sql`${blobs.mediaType} IN ('image/png', 'image/jpeg')`)),
      );
      return r ?? null;
    },
    requestView: async (requestId) => {
      const [row] = (await c.read((db) => db.select(sqliteShaped(modelRequests)).from(modelRequests).where(eq(modelRequests.id, requestId)))) as Array<Record<string, unknown>>;
      if (!row) return null;
      const [pin] = await c.read((db) => c.rows<{ digest: string; record: string }>(db, "SELECT digest, record::text AS record FROM header_records WHERE id = $1", [row.header_record_id]));
      const [f] = row.frontier_id
        ? await c.read((db) => c.rows<{ id: string; covers_through: number; block: string; created_at_ms: number }>(db, "SELECT id, covers_through, block, created_at_ms FROM frontiers WHERE id = $1", [row.frontier_id]))
        : [];
      const records = await transcript.loadTranscript(row.session_id as string, f?.covers_through ?? 0, row.through_seq as number);
      return requestViewOf(requestId, row, pin, f, records);
    },
  };
}
