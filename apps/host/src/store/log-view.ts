import { activationHistory } from "@klbr/activation";
import { getTableName } from "drizzle-orm";
import type Database from "better-sqlite3";

/** One line of the durable log as `klbr log` shows it. */
export interface LogEntry {
  /** A key unique per entry, so a follower shows each once. */
  key: string;
  at_ms: number;
  kind: string;
  [field: string]: unknown;
}

/**
 * One table the log view reads: the statement of the whole table, the mapping of a row, and for
 * tables whose rows are updated after they are written, whether a row may still change its key
 * (`open`): the follower re-reads such a row on each poll until it has closed.
 */
export interface LogTable {
  /** The table, quoted where needed. */
  from: string;
  map: (r: Record<string, unknown>) => LogEntry;
  open?: (r: Record<string, unknown>) => boolean;
}

/** The tables `klbr log` reads, in table order (store/pg/log-view.ts reads the same list). */
export const LOG_TABLES: readonly LogTable[] = [
  {
    from: "events",
    map: (r) => ({
      key: `event:${r.id}`,
      at_ms: r.received_at_ms as number,
      kind: r.direction === "in" ? "input" : "message",
      id: r.id,
      session_id: r.session_id,
      source: r.source,
      payload: json(r.payload),
      attention: json(r.attention),
      effect_id: r.effect_id,
    }),
  },
  {
    from: "executions",
    map: (r) => ({
      key: `execution:${r.id}:${r.status}`,
      at_ms: (r.ended_at_ms ?? r.started_at_ms) as number,
      kind: "execution",
      id: r.id,
      session_id: r.session_id,
      generation: r.generation,
      status: r.status,
      code: r.code,
      output: json(r.output),
      truncated_bytes: r.truncated_bytes,
      error: r.error,
      ended_by: r.ended_by,
      failure: json(r.failure),
      started_at_ms: r.started_at_ms,
      ended_at_ms: r.ended_at_ms,
      // What the cell cost (C17); for the operator, never in what the model reads.
      cpu_ms: r.cpu_ms ?? null,
      peak_rss_bytes: r.peak_rss_bytes ?? null,
      // C20: who ran it, and its displays in order (DisplayRefs: fetch with `klbr display get`).
      origin: r.origin ?? null,
      displays: json(r.displays) ?? [],
      displays_dropped: r.displays_dropped ?? 0,
    }),
    // finishExecution closes a running row once; nothing moves a closed row to another status.
    open: (r) => r.status === "running",
  },
  {
    from: "effects",
    map: (r) => ({
      key: `effect:${r.id}`,
      at_ms: r.created_at_ms as number,
      kind: "effect",
      id: r.id,
      execution_id: r.execution_id,
      status: r.status,
      event_id: r.event_id,
      reason: r.reason,
      text: r.text,
    }),
  },
  {
    from: "host_requests",
    map: (r) => ({
      key: `request:${r.id}:${r.replied_at_ms === null ? "open" : "replied"}`,
      at_ms: r.requested_at_ms as number,
      kind: "request",
      execution_id: r.execution_id,
      request_id: r.request_id,
      method: r.method,
      reply: json(r.reply),
    }),
    open: (r) => r.replied_at_ms === null,
  },
  {
    from: "waits",
    map: (r) => ({
      key: `wait:${r.id}:${r.state}`,
      at_ms: (r.woken_at_ms ?? r.created_at_ms) as number,
      kind: r.state === "woken" ? "wake" : r.state === "superseded" ? "wait.superseded" : "wait",
      id: r.id,
      // A turn's own waits (model_ended_turn, route_failed, ...) belong to no cell: the session says whose they are.
      session_id: r.session_id,
      execution_id: r.execution_id,
      reason: r.reason,
      deadline_ms: r.deadline_ms,
      pending_input: r.pending_input === 1,
      woken_by: r.woken_by,
    }),
    open: (r) => r.state === "waiting",
  },
  {
    from: "kernel_resets",
    map: (r) => ({
      key: `kernel:${r.id}`,
      at_ms: r.at_ms as number,
      kind: "kernel.reset",
      session_id: r.session_id,
      generation: r.generation,
      skills_revision: r.skills_revision,
      pid: r.pid,
      reason: r.reason,
    }),
  },
  {
    from: "header_records",
    map: (r) => ({ key: `header:${r.id}`, at_ms: r.at_ms as number, kind: r.type as string, session_id: r.session_id, digest: r.digest }),
  },
  {
    from: "peers",
    map: (r) => ({
      key: `peer:${r.id}:${r.status}`,
      at_ms: (r.stopped_at_ms ?? r.stop_requested_at_ms ?? r.opened_at_ms) as number,
      kind: "peer",
      id: r.id,
      session_id: r.session_id,
      opener_session_id: r.opener_session_id,
      mode: r.mode,
      status: r.status,
      stop_drain: r.stop_drain === null ? null : r.stop_drain === 1,
      stopped_by: r.stopped_by,
    }),
    // open -> stopping -> stopped, each once; a stopped peer never changes again.
    open: (r) => r.status !== "stopped",
  },
  {
    from: "peer_requests",
    map: (r) => ({
      key: `peer_request:${r.id}:${r.status}`,
      at_ms: (r.answered_at_ms ?? r.cancelled_at_ms ?? r.sent_at_ms) as number,
      kind: "peer_request",
      request_id: r.request_id,
      peer_id: r.peer_id,
      from_session: r.from_session_id,
      to_session: r.to_session_id,
      status: r.status,
      content: r.content,
      event_id: r.event_id,
      result: json(r.result),
      result_event_id: r.result_event_id,
      sent_by_execution_id: r.sent_by_execution_id,
      answered_by_execution_id: r.answered_by_execution_id,
      cancelled_by: r.cancelled_by,
    }),
    // pending -> answered | cancelled, once.
    open: (r) => r.status === "pending",
  },
  {
    from: "work_items",
    map: (r) => ({
      key: `work_item:${r.id}:${r.status}:${r.outcome ?? ""}`,
      at_ms: (r.closed_at_ms ?? r.created_at_ms) as number,
      kind: "maintenance.work_item",
      id: r.id,
      session_id: r.session_id,
      execution_id: r.execution_id,
      status: r.status,
      outcome: r.outcome,
      purpose: r.purpose,
      reason: r.reason,
      evidence_refs: json(r.evidence_refs),
    }),
    // An open item is assessed later: `deferred` keeps it open with an outcome, the others close it.
    open: (r) => r.status === "open",
  },
  {
    from: "work_item_assessments",
    map: (r) => ({
      key: `assessment:${r.id}`,
      at_ms: r.at_ms as number,
      kind: "maintenance.assessment",
      work_item_id: r.work_item_id,
      execution_id: r.execution_id,
      outcome: r.outcome,
      status: r.status,
    }),
  },
  {
    from: "orientation_candidates",
    map: (r) => ({
      key: `candidate:${r.id}:${r.status}`,
      at_ms: r.staged_at_ms as number,
      kind: "orientation.candidate",
      id: r.id,
      session_id: r.session_id,
      execution_id: r.execution_id,
      target: r.target,
      scope: r.scope_kind === "global" ? "global" : `session:${String(r.scope_session_id)}`,
      status: r.status,
      digest: r.digest,
      text: r.text,
    }),
    open: (r) => r.status === "staged",
  },
  {
    from: "orientation_adoptions",
    map: (r) => ({
      key: `adoption:${r.id}`,
      at_ms: r.adopted_at_ms as number,
      kind: "orientation.adoption",
      operation_id: r.operation_id,
      candidate_id: r.candidate_id,
      target: r.target,
      scope: r.scope_kind === "global" ? "global" : `session:${String(r.scope_session_id)}`,
      session_id: r.session_id,
      execution_id: r.execution_id,
      step: r.step,
    }),
  },
  {
    from: "model_requests",
    map: (r) => ({
      key: `model:${r.id}:${r.status}`,
      at_ms: (r.ended_at_ms ?? r.started_at_ms) as number,
      kind: "model.request",
      id: r.id,
      session_id: r.session_id,
      route: r.route,
      model: r.model,
      status: r.status,
      body_digest: r.body_digest,
      body_bytes: r.body_bytes,
      shared_prefix_bytes: r.shared_prefix_bytes,
      retries: r.retries,
      usage: json(r.usage),
      error: json(r.error),
      reply: json(r.reply),
      // The model the reply named (C18), null when it named none or the request has no reply.
      response_model: r.response_model ?? null,
      started_at_ms: r.started_at_ms,
      ended_at_ms: r.ended_at_ms,
    }),
    open: (r) => r.status === "running",
  },
  {
    from: "frontiers",
    map: (r) => ({ key: `frontier:${r.id}:${r.installed_at_ms === null ? "selected" : "installed"}`, at_ms: (r.installed_at_ms ?? r.created_at_ms) as number, kind: "frontier", id: r.id, session_id: r.session_id, reason: r.reason, covers_through: r.covers_through, execution_id: r.execution_id, installed: r.installed_at_ms !== null }),
    open: (r) => r.installed_at_ms === null,
  },
  {
    from: "remote_namespaces",
    map: (r) => ({
      key: `remote_namespace:${r.id}:${r.status}`,
      at_ms: (r.closed_at_ms ?? r.opened_at_ms) as number,
      kind: "remote.namespace",
      id: r.id,
      session_id: r.session_id,
      target: r.target,
      status: r.status,
      opened_by_execution_id: r.opened_by_execution_id,
      closed_by: r.closed_by,
    }),
    // open -> closed, once.
    open: (r) => r.status === "open",
  },
  {
    from: "remote_generations",
    map: (r) => ({
      key: `remote_generation:${r.id}:${r.ended_at_ms === null ? "live" : "ended"}`,
      at_ms: (r.ended_at_ms ?? r.started_at_ms) as number,
      kind: r.ended_at_ms === null ? "remote.generation" : "remote.generation.end",
      namespace_id: r.namespace_id,
      generation: r.generation,
      target: r.target,
      remote_pid: r.remote_pid,
      ssh_pid: r.local_pid,
      runtime_digest: r.runtime_digest,
      runtime_copied: r.runtime_copied === 1,
      python: r.python,
      end_reason: r.end_reason,
    }),
    open: (r) => r.ended_at_ms === null,
  },
  {
    from: "remote_operations",
    map: (r) => ({
      key: `remote_operation:${r.id}:${r.status}`,
      at_ms: (r.ended_at_ms ?? r.started_at_ms) as number,
      kind: "remote.operation",
      namespace_id: r.namespace_id,
      generation: r.generation,
      operation_id: r.operation_id,
      operation: r.operation,
      execution_id: r.execution_id,
      status: r.status,
      code: r.code,
      completion: json(r.completion),
      ended_by: r.ended_by,
    }),
    // running -> a terminal status, once.
    open: (r) => r.status === "running",
  },
  {
    from: "incidents",
    map: (r) => ({ key: `incident:${r.id}`, at_ms: r.at_ms as number, kind: `incident.${r.kind}`, detail: json(r.detail) }),
  },
  {
    // @klbr/activation owns this table; the host migrates it at start, so it is always there.
    from: `"${getTableName(activationHistory)}"`,
    map: (r) => ({ ...r, key: `activation:${r.id}`, at_ms: r.at_ms as number, kind: "activation" }),
  },
];

function json(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The log tables this database has: one written by an older host lacks the newer tables until a host migrates it. */
function presentQueries(sqlite: Database.Database): LogTable[] {
  const names = new Set((sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
  return LOG_TABLES.filter((q) => names.has(q.from.replace(/"/g, "")));
}

/** Every log entry, oldest first (entries at the same instant keep table order). */
export function readLog(sqlite: Database.Database): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const q of presentQueries(sqlite)) for (const row of sqlite.prepare(`SELECT * FROM ${q.from}`).all() as Record<string, unknown>[]) entries.push(q.map(row));
  return entries.sort((a, b) => a.at_ms - b.at_ms);
}

/** Reads the log piece by piece: each poll returns only what may be new since the last one. */
export interface LogFollower {
  /**
   * The first poll returns what `readLog` returns. Later ones return the rows written since, and
   * the rows that were still open (a running execution, an unanswered request, a waiting wait)
   * as they are now, whether or not they changed; the caller drops keys it has already shown.
   * Oldest first, entries at the same instant in table order, then row order, as `readLog`.
   */
  poll(): LogEntry[];
  /** Rows SQLite returned so far, over every poll (a seam for tests and measurements). */
  readonly rowsRead: number;
}

// The column name the follower reads each row's rowid under; it is removed before the row is
// mapped, so an entry is the same object `readLog` builds.
const ROWID = "__klbr_rowid";

/**
 * A follower over the log tables. Per table it keeps the highest rowid it has read (every table
 * here is a rowid table, and no row is ever deleted, so a new row always has a higher rowid; for
 * the INTEGER PRIMARY KEY tables rowid is their id) and asks only for rows above it
 * (`rowid > ?`, a range search on the table's own b-tree).
 *
 * Rows updated in place after they were written can change their key, and then `klbr log
 * --follow` prints them again (an execution that ends, a request that is answered, a wait that
 * wakes). The follower remembers the rowids of the rows it last read open and re-reads those,
 * one `rowid = ?` lookup each, until they close. Selecting `status = 'running'` through the
 * index instead would miss exactly the rows that closed since the last poll, and an "updated
 * after the last poll" stamp would depend on clocks and on when the writer took the stamp
 * relative to its commit; a single `rowid > ? OR rowid IN (...)` statement makes SQLite scan the
 * whole table. Every statement is prepared once, here.
 */
export function followLog(sqlite: Database.Database): LogFollower {
  const tables = presentQueries(sqlite).map((q) => ({
    q,
    after: sqlite.prepare(`SELECT *, rowid AS ${ROWID} FROM ${q.from} WHERE rowid > ? ORDER BY rowid`),
    again: q.open ? sqlite.prepare(`SELECT *, rowid AS ${ROWID} FROM ${q.from} WHERE rowid = ?`) : undefined,
    last: 0,
    /** Rowids read open, ascending (all of them at or below `last`). */
    open: [] as number[],
  }));
  let rowsRead = 0;
  return {
    get rowsRead() {
      return rowsRead;
    },
    poll() {
      const entries: LogEntry[] = [];
      for (const t of tables) {
        const rows: Record<string, unknown>[] = [];
        for (const rowid of t.open) {
          const row = t.again!.get(rowid) as Record<string, unknown> | undefined;
          if (row) rows.push(row);
        }
        rows.push(...(t.after.all(t.last) as Record<string, unknown>[]));
        rowsRead += rows.length;
        t.open = [];
        for (const { [ROWID]: rowid, ...row } of rows) {
          const id = rowid as number;
          if (id > t.last) t.last = id;
          if (t.q.open?.(row)) t.open.push(id);
          entries.push(t.q.map(row));
        }
      }
      return entries.sort((a, b) => a.at_ms - b.at_ms);
    },
  };
}

/**
 * Whether an entry is of one of `kinds`: a kind names itself and every kind under it
 * (`maintenance` matches `maintenance.work_item` and `maintenance.assessment`).
 */
export function kindMatches(kind: string, kinds: readonly string[]): boolean {
  return kinds.some((k) => kind === k || kind.startsWith(`${k}.`));
}
