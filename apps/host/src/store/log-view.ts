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

const QUERIES: Array<{ sql: string; map: (r: Record<string, unknown>) => LogEntry }> = [
  {
    sql: "SELECT * FROM events",
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
    sql: "SELECT * FROM executions",
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
    }),
  },
  {
    sql: "SELECT * FROM effects",
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
    sql: "SELECT * FROM host_requests",
    map: (r) => ({
      key: `request:${r.id}:${r.replied_at_ms === null ? "open" : "replied"}`,
      at_ms: r.requested_at_ms as number,
      kind: "request",
      execution_id: r.execution_id,
      request_id: r.request_id,
      method: r.method,
      reply: json(r.reply),
    }),
  },
  {
    sql: "SELECT * FROM waits",
    map: (r) => ({
      key: `wait:${r.id}:${r.state}`,
      at_ms: (r.woken_at_ms ?? r.created_at_ms) as number,
      kind: r.state === "woken" ? "wake" : "wait",
      id: r.id,
      execution_id: r.execution_id,
      reason: r.reason,
      deadline_ms: r.deadline_ms,
      pending_input: r.pending_input === 1,
      woken_by: r.woken_by,
    }),
  },
  {
    sql: "SELECT * FROM kernel_resets",
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
    sql: "SELECT * FROM header_records",
    map: (r) => ({ key: `header:${r.id}`, at_ms: r.at_ms as number, kind: r.type as string, session_id: r.session_id, digest: r.digest }),
  },
  {
    sql: "SELECT * FROM incidents",
    map: (r) => ({ key: `incident:${r.id}`, at_ms: r.at_ms as number, kind: `incident.${r.kind}`, detail: json(r.detail) }),
  },
  {
    // @klbr/activation owns this table; the host migrates it at start, so it is always there.
    sql: `SELECT * FROM "${getTableName(activationHistory)}"`,
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

/** Every log entry, oldest first (entries at the same instant keep table order). */
export function readLog(sqlite: Database.Database): LogEntry[] {
  const entries: LogEntry[] = [];
  for (const q of QUERIES) for (const row of sqlite.prepare(q.sql).all() as Record<string, unknown>[]) entries.push(q.map(row));
  return entries.sort((a, b) => a.at_ms - b.at_ms);
}
