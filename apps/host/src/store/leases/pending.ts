import { sql, type SQL } from "drizzle-orm";

/**
 * Sessions with pending work (C21 failover) whose lease nobody holds live: a cell or a model
 * request left running, a wait whose deadline passed (`nowMs`, the hosts' clock the deadlines were
 * set by), an input not yet taken in. Those whose lease expired longest ago come first. The same
 * text runs in both dialects; `dbNow` is the dialect's clock expression.
 */
export function pendingQuery(dbNow: SQL, nowMs: number, limit: number): SQL {
  return sql`SELECT p.session_id AS session_id FROM (
      SELECT session_id FROM executions WHERE status = 'running'
      UNION SELECT session_id FROM model_requests WHERE status = 'running'
      UNION SELECT session_id FROM waits WHERE state = 'waiting' AND deadline_ms IS NOT NULL AND deadline_ms <= ${nowMs}
      UNION SELECT session_id FROM events WHERE direction = 'in' AND consumed_at_ms IS NULL
    ) p LEFT JOIN leases l ON l.session_id = p.session_id
    WHERE l.session_id IS NULL OR l.host_id IS NULL OR l.expires_at_ms <= ${dbNow}
    ORDER BY COALESCE(l.expires_at_ms, 0), p.session_id
    LIMIT ${Math.max(0, Math.floor(limit))}`;
}
