import type { HostReplyEvent } from "@klbr/supervisor";
import type { HostDb } from "../db/open";
import { recordReply, recordRequest } from "../store/requests";
import { canonicalName } from "../requests";

/**
 * The host_requests log, written from both ends: the row when a handler is about to run, and its
 * reply when the supervisor reports what actually went out. So the log holds exactly the reply
 * the worker was sent (C8), including one the supervisor had to replace (an unencodable value
 * becomes `internal`) and its own refusals (`limit_exceeded`, `scope_expired` after a yield, ...),
 * which never reach a handler. A reply nothing received is kept with `sent: false`.
 */
export class RequestLog {
  /** Rows awaiting their reply, by execution and request id (a retry may reuse an id). */
  private readonly awaiting = new Map<string, number[]>();

  constructor(
    private readonly db: HostDb,
    private readonly now: () => number,
  ) {}

  /** Record a request a handler is about to serve; returns its row id. */
  opened(executionId: string, requestId: string, request: { method: string }): number {
    const method = canonicalName(request.method);
    // Aliases are recorded under the canonical method name (C13).
    const rowId = recordRequest(this.db, { executionId, requestId, method, request: { ...request, method }, requestedAtMs: this.now() });
    const key = keyOf(executionId, requestId);
    const rows = this.awaiting.get(key);
    if (rows) rows.push(rowId);
    else this.awaiting.set(key, [rowId]);
    return rowId;
  }

  /** The supervisor's report of one reply: close the handler's row, or record a refusal whole. */
  replied(event: HostReplyEvent): void {
    const key = keyOf(event.executionId, event.requestId);
    const rows = event.handled ? this.awaiting.get(key) : undefined;
    let rowId = rows?.shift();
    if (rows && rows.length === 0) this.awaiting.delete(key);
    if (rowId === undefined) {
      const raw = event.request as Record<string, unknown> | null | undefined;
      const named = typeof raw?.method === "string";
      const method = named ? canonicalName(raw!.method as string) : "(unparsed)";
      const request = named ? { ...raw, method } : (raw ?? {});
      rowId = recordRequest(this.db, { executionId: event.executionId, requestId: event.requestId, method, request, requestedAtMs: this.now() });
    }
    recordReply(this.db, rowId, event.sent ? event.reply : { ...event.reply, sent: false }, this.now());
  }
}

function keyOf(executionId: string, requestId: string): string {
  return `${executionId}\u0000${requestId}`;
}
