import { and, eq, inArray, isNull } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { executions, hostRequests, modelRequests } from "../db/schema";
import { finishExecution, type ExecutionEnd } from "./executions";
import { recordIncident } from "./incidents";

/** What a host taking a session over found left by the host that held it (C21). */
export interface SessionRecovery {
  /** Cells that were running on the lost host: each now has a host-made `failed` record, error `host_lost`. */
  lost: string[];
  /** Model requests that got no committed reply: closed, so the turn sends them again. */
  requests: string[];
  /** Host requests of those cells that were never answered. */
  unanswered: number[];
}

/** What each dialect writes for a session taken over (the same rows on both). */
export const takeover = {
  /** A cell that ran on the lost host. */
  lostCell: (previous: { hostId: string; epoch: number }, nowMs: number): ExecutionEnd => ({
    status: "failed",
    error: "host_lost",
    endedBy: "host_lost",
    failure: { reason: "host_lost", host_id: previous.hostId, epoch: previous.epoch, observed_at_ms: nowMs, detail: "the host running this cell lost its lease; its worker and namespace are gone" },
    endedAtMs: nowMs,
  }),
  /** The reply of a host request of such a cell that was never answered. */
  unansweredReply: { kind: "error", code: "host_lost", message: "the host running this cell lost its lease before answering; no reply reached the cell", sent: false },
  /** A model request that got no committed reply. */
  cutRequest: (reason: string) => ({ code: reason, message: "the host that sent this request lost the session before the reply was committed", status: null }),
  /** Whether the takeover is said in an incident, and its detail. */
  incident: (sessionId: string, reason: string, previous: { hostId: string; epoch: number }, found: SessionRecovery): Record<string, unknown> | null =>
    found.lost.length + found.requests.length + found.unanswered.length > 0 || reason === "host_failover"
      ? { session_id: sessionId, reason, previous_host: previous.hostId, previous_epoch: previous.epoch, lost: found.lost, requests: found.requests, ...(found.unanswered.length > 0 ? { unanswered_requests: found.unanswered } : {}) }
      : null,
};

/**
 * Close what the session's previous holder left open, as a restart does for the whole log, for
 * one session: its running cells `failed` with error `host_lost` (their worker and namespace are on
 * a host that is gone or fenced off), their unanswered host requests, its running model requests
 * (no reply was committed, so none is replayed: the turn asks again). One transaction, with the
 * incident that says so; the caller holds the session's new lease.
 */
export function recoverSession(db: HostDb, sessionId: string, previous: { hostId: string; epoch: number }, reason: "host_failover" | "host_restart", nowMs: number): SessionRecovery {
  return db.transaction(
    (tx) => {
      const t = tx as unknown as HostDb;
      const running = t.select({ id: executions.id }).from(executions).where(and(eq(executions.sessionId, sessionId), eq(executions.status, "running"))).all();
      const lost = running.map((r) => r.id);
      for (const id of lost) finishExecution(t, id, takeover.lostCell(previous, nowMs));
      const unanswered =
        lost.length === 0
          ? []
          : t
              .update(hostRequests)
              .set({ reply: takeover.unansweredReply, repliedAtMs: nowMs })
              .where(and(inArray(hostRequests.executionId, lost), isNull(hostRequests.repliedAtMs)))
              .returning({ id: hostRequests.id })
              .all()
              .map((r) => r.id);
      const requests = t
        .update(modelRequests)
        .set({ status: "error", error: takeover.cutRequest(reason), endedAtMs: nowMs })
        .where(and(eq(modelRequests.sessionId, sessionId), eq(modelRequests.status, "running")))
        .returning({ id: modelRequests.id })
        .all()
        .map((r) => r.id);
      const found = { lost, requests, unanswered };
      const detail = takeover.incident(sessionId, reason, previous, found);
      if (detail) recordIncident(t, "session.taken_over", detail, nowMs);
      return found;
    },
    { behavior: "immediate" },
  );
}
