import type { UsageRecord } from "@klbr/usage";
import type { CellRecord, ModelRequestRecord, Telemetry } from "@klbr/telemetry";
import type Database from "better-sqlite3";
import type { HostDb } from "../db/open";
import type { Notification } from "../requests/context";
import { reassembleRequestSync } from "../runtime/reassemble";
import { getExecution } from "../store/executions";
import type { ModelRequestRow } from "../store/model-requests";
import { callIdOfCell, hostRequestsOf, modelRequestById, peerCausesOf } from "../store/telemetry";

/** What the observer reads of the host: its log, and the route that drives sessions. */
export interface TelemetryHost {
  readonly db: HostDb;
  readonly sqlite: Database.Database;
  /** The route that drives sessions, when one does. */
  route(): { name: string; api: string; model: string } | null;
}

/**
 * Feeds the host's notifications to telemetry (C18). A notification is sent right after the log
 * recorded what it announces, so each becomes deferred work that reads the record back and makes
 * spans from it: nothing here runs on the path of the turn, cell or request that notified.
 */
export class TelemetryObserver {
  /** When each session's previous turn began: a peer message after it may have caused the next. */
  private readonly lastTurnAt = new Map<string, number>();

  constructor(
    private readonly host: TelemetryHost,
    private readonly telemetry: Telemetry,
  ) {}

  /** One notification (subscribe this to the host's bus). */
  follow(n: Notification): void {
    if (n.type === "execution") {
      const executionId = n.execution_id;
      this.telemetry.defer((r) => {
        if (!r.tracks(executionId)) return;
        const row = getExecution(this.host.db, executionId);
        if (row) r.cellFinished(this.cellRecord(row));
      });
      return;
    }
    if (n.type !== "model") return;
    const sessionId = n.session_id;
    const atMs = n.at_ms;
    switch (n.phase) {
      case "turn_start": {
        const turnId = String(n.turn_id);
        const since = this.lastTurnAt.get(sessionId) ?? 0;
        this.lastTurnAt.set(sessionId, atMs);
        const route = this.host.route();
        this.telemetry.defer((r) => r.turnStarted({ sessionId, turnId, atMs, ...(route ? { route } : {}), causedBy: peerCausesOf(this.host.db, sessionId, since, atMs) }));
        return;
      }
      case "reply":
      case "error": {
        const id = String(n.request_id);
        this.telemetry.defer((r) => {
          const row = modelRequestById(this.host.db, id);
          if (row) r.modelRequest(this.requestRecord(row));
        });
        return;
      }
      case "cell": {
        const executionId = String(n.execution_id);
        this.telemetry.defer((r) => r.cellStarted({ sessionId, executionId, callId: callIdOfCell(this.host.db, executionId), atMs }));
        return;
      }
      case "turn_end": {
        const reason = String(n.reason);
        this.telemetry.defer((r) => r.turnEnded({ sessionId, reason, atMs }));
        return;
      }
    }
  }

  private requestRecord(row: ModelRequestRow): ModelRequestRecord {
    return {
      id: row.id,
      sessionId: row.sessionId,
      route: row.route,
      api: row.api,
      model: row.model,
      headerRecordId: row.headerRecordId,
      bodyBytes: row.bodyBytes,
      sharedPrefixBytes: row.sharedPrefixBytes,
      status: row.status,
      error: row.error as ModelRequestRecord["error"],
      retries: row.retries,
      usage: row.usage as UsageRecord | null,
      reply: row.reply as ModelRequestRecord["reply"],
      responseModel: row.responseModel,
      startedAtMs: row.startedAtMs,
      endedAtMs: row.endedAtMs,
      // Rebuilt from the log only when contents are captured (the recorder asks only then).
      messages: () => {
        const body = JSON.parse(reassembleRequestSync(this.host.db, this.host.sqlite, row).text) as Record<string, unknown>;
        return body.messages ?? body.input ?? body;
      },
    };
  }

  private cellRecord(row: NonNullable<ReturnType<typeof getExecution>>): CellRecord {
    return {
      sessionId: row.sessionId,
      executionId: row.id,
      code: row.code,
      status: row.status,
      output: (row.output as CellRecord["output"]) ?? null,
      truncatedBytes: row.truncatedBytes,
      error: row.error,
      endedBy: row.endedBy,
      startedAtMs: row.startedAtMs,
      endedAtMs: row.endedAtMs,
      hostRequests: hostRequestsOf(this.host.db, row.id).map((h) => ({
        requestId: h.requestId,
        method: h.method,
        request: h.request as Record<string, unknown>,
        reply: (h.reply as Record<string, unknown> | null) ?? null,
        requestedAtMs: h.requestedAtMs,
        repliedAtMs: h.repliedAtMs,
      })),
    };
  }
}
