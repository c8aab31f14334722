import type { UsageRecord } from "@klbr/usage";
import type { CellRecord, ModelRequestRecord, SpanRecorder, Telemetry } from "@klbr/telemetry";
import type { Notification } from "../requests/context";
import { reassembleRequest } from "../runtime/reassemble";
import type { Store } from "../store/api";
import type { ExecutionRow } from "../store/executions";
import type { ModelRequestRow } from "../store/model-requests";

/** What the observer reads of the host: its log (through the Store), and the route that drives sessions. */
export interface TelemetryHost {
  readonly store: Pick<Store, "getExecution" | "modelRequestById" | "callIdOfCell" | "hostRequestsOf" | "peerCausesOf" | "headerRecord" | "getFrontier" | "loadTranscript">;
  /** The route that drives sessions, when one does. */
  route(): { name: string; api: string; model: string } | null;
}

/**
 * Feeds the host's notifications to telemetry (C18). A notification is sent right after the log
 * recorded what it announces, so each becomes deferred work that reads the record back and makes
 * spans from it: nothing here runs on the path of the turn, cell or request that notified. The
 * reads are async (the Store), so they run on one chain in notification order, and each span is
 * made (deferred again) in that order: a cell's start before its end, a turn's start before its cells.
 */
export class TelemetryObserver {
  /** When each session's previous turn began: a peer message after it may have caused the next. */
  private readonly lastTurnAt = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: TelemetryHost,
    private readonly telemetry: Telemetry,
  ) {}

  /** One notification (subscribe this to the host's bus). */
  follow(n: Notification): void {
    const { store } = this.host;
    if (n.type === "execution") {
      const executionId = n.execution_id;
      // Whether the execution is tracked is asked when its span is made: its start may still be queued now.
      this.later(
        async () => {
          const row = await store.getExecution(executionId);
          return row ? this.cellRecord(row) : null;
        },
        (r, cell) => cell !== null && r.tracks(executionId) && r.cellFinished(cell),
      );
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
        this.later(() => store.peerCausesOf(sessionId, since, atMs), (r, causedBy) => r.turnStarted({ sessionId, turnId, atMs, ...(route ? { route } : {}), causedBy }));
        return;
      }
      case "reply":
      case "error": {
        const id = String(n.request_id);
        this.later(
          async () => {
            const row = await store.modelRequestById(id);
            return row ? this.requestRecord(row, this.telemetry.config.captureContent ? await this.messagesOf(row) : undefined) : null;
          },
          (r, record) => record !== null && r.modelRequest(record),
        );
        return;
      }
      case "cell": {
        const executionId = String(n.execution_id);
        this.later(() => store.callIdOfCell(executionId), (r, callId) => r.cellStarted({ sessionId, executionId, callId, atMs }));
        return;
      }
      case "turn_end": {
        const reason = String(n.reason);
        this.later(async () => null, (r) => r.turnEnded({ sessionId, reason, atMs }));
        return;
      }
    }
  }

  /** Resolves once every notification followed so far was read back (close: their spans are then waiting in telemetry's queue). */
  settled(): Promise<void> {
    return this.chain;
  }

  /**
   * On a later turn of the event loop, `read` on the chain (after every read before it), then the
   * span made from what it read, deferred in the same order. A read that fails makes no span and
   * counts as dropped, as a span whose building failed does.
   */
  private later<T>(read: () => Promise<T>, make: (r: SpanRecorder, value: T) => unknown): void {
    this.telemetry.defer(() => {
      this.chain = this.chain.then(async () => {
        try {
          const value = await read();
          this.telemetry.defer((r) => void make(r, value));
        } catch (error) {
          this.telemetry.defer(() => {
            throw error;
          });
        }
      });
    });
  }

  /** The request's messages as the model read them, rebuilt from the log (read only when contents are captured). */
  private async messagesOf(row: ModelRequestRow): Promise<unknown> {
    const body = JSON.parse((await reassembleRequest(this.host.store, row)).text) as Record<string, unknown>;
    return body.messages ?? body.input ?? body;
  }

  private requestRecord(row: ModelRequestRow, messages: unknown): ModelRequestRecord {
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
      messages: () => messages,
    };
  }

  private async cellRecord(row: ExecutionRow): Promise<CellRecord> {
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
      hostRequests: (await this.host.store.hostRequestsOf(row.id)).map((h) => ({
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
