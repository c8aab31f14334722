import type { HostReplyEvent } from "@klbr/supervisor";
import type { Store } from "../store/api";
import { canonicalName } from "../requests";

/**
 * The host_requests log, written from both ends: the row when a handler is about to run, and its
 * reply when the supervisor reports what actually went out. So the log holds exactly the reply
 * the worker was sent (C8), including one the supervisor had to replace (an unencodable value
 * becomes `internal`) and its own refusals (`limit_exceeded`, `scope_expired` after a yield, ...),
 * which never reach a handler. A reply nothing received is kept with `sent: false`.
 */
export class RequestLog {
  /** Rows awaiting their reply, by execution and request id (a retry may reuse an id), with the session they are written under. */
  private readonly awaiting = new Map<string, Array<{ rowId: number; sessionId: string }>>();

  constructor(
    private readonly store: Pick<Store, "recordRequest" | "recordReply" | "getExecution">,
    private readonly now: () => number,
  ) {}

  /** Record a request of `sessionId`'s cell a handler is about to serve (committed when this resolves); its row id. */
  async opened(sessionId: string, executionId: string, requestId: string, request: { method: string }): Promise<number> {
    const method = canonicalName(request.method);
    // Aliases are recorded under the canonical method name (C13).
    const rowId = await this.store.recordRequest(sessionId, { executionId, requestId, method, request: { ...request, method }, requestedAtMs: this.now() });
    const key = keyOf(executionId, requestId);
    const rows = this.awaiting.get(key);
    if (rows) rows.push({ rowId, sessionId });
    else this.awaiting.set(key, [{ rowId, sessionId }]);
    return rowId;
  }

  /**
   * The supervisor's report of one reply: close the handler's row, or record a refusal whole. The
   * supervisor cannot wait for it: a write the log refuses is said on stderr.
   */
  async replied(event: HostReplyEvent): Promise<void> {
    try {
      await this.record(event);
    } catch (error) {
      process.stderr.write(`klbr: reply to ${event.executionId}/${event.requestId} not recorded: ${String(error)}\n`);
    }
  }

  private async record(event: HostReplyEvent): Promise<void> {
    const key = keyOf(event.executionId, event.requestId);
    const rows = event.handled ? this.awaiting.get(key) : undefined;
    let row = rows?.shift();
    if (rows && rows.length === 0) this.awaiting.delete(key);
    const reply = event.sent ? event.reply : { ...event.reply, sent: false };
    const repliedAtMs = this.now();
    if (row === undefined) {
      const raw = event.request as Record<string, unknown> | null | undefined;
      const named = typeof raw?.method === "string";
      const method = named ? canonicalName(raw!.method as string) : "(unparsed)";
      const request = named ? { ...raw, method } : (raw ?? {});
      // A refusal no handler saw: its session is its execution's (an unknown execution's row names none).
      const sessionId = (await this.store.getExecution(event.executionId))?.sessionId ?? "";
      row = { rowId: await this.store.recordRequest(sessionId, { executionId: event.executionId, requestId: event.requestId, method, request, requestedAtMs: repliedAtMs }), sessionId };
    }
    await this.store.recordReply(row.sessionId, row.rowId, reply, repliedAtMs);
  }
}

function keyOf(executionId: string, requestId: string): string {
  return `${executionId}\u0000${requestId}`;
}
