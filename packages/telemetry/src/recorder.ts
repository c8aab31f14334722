import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link, type Span, type SpanContext, type Tracer } from "@opentelemetry/api";
import * as A from "./attributes";
import type { CellRecord, CellStart, HostRequestRecord, ModelRequestRecord, TurnEnd, TurnStart } from "./records";

/** How many finished cells' span contexts are kept for peer links (a peer answers soon or not at all). */
const LINKABLE_CELLS = 1024;

/** The GenAI provider name of a route's API (the API family the host speaks, not who serves it). */
export function providerOf(api: string): string {
  return api === "anthropic" ? A.GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC : A.GEN_AI_PROVIDER_NAME_VALUE_OPENAI;
}

/**
 * Turns the log's records into spans (C18): one trace per turn, `invoke_agent <session>` at its
 * root, a `chat <model>` child per model request and an `execute_tool python` child per cell, host
 * requests as events of their cell, workspace commands and peer requests as child spans of the
 * cell, and a turn caused by a peer request linked to the cell that sent it. Every time comes from
 * the record, so spans made after the fact are exact.
 */
export class SpanRecorder {
  private readonly turns = new Map<string, Span>();
  private readonly cells = new Map<string, Span>();
  private readonly linkable = new Map<string, SpanContext>();

  constructor(
    private readonly tracer: Tracer,
    private readonly captureContent: boolean,
  ) {}

  /** A turn began: its root span. A turn still open for the session is ended first (it was cut short). */
  turnStarted(turn: TurnStart): void {
    this.turnEnded({ sessionId: turn.sessionId, reason: "superseded", atMs: turn.atMs });
    const links: Link[] = [];
    for (const executionId of turn.causedBy ?? []) {
      const cause = this.cells.get(executionId)?.spanContext() ?? this.linkable.get(executionId);
      if (cause) links.push({ context: cause });
    }
    const attributes: Attributes = {
      [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [A.ATTR_GEN_AI_AGENT_NAME]: "klbr",
      [A.ATTR_GEN_AI_CONVERSATION_ID]: turn.sessionId,
      [A.ATTR_KLBR_TURN_ID]: turn.turnId,
    };
    if (turn.route) {
      attributes[A.ATTR_GEN_AI_PROVIDER_NAME] = providerOf(turn.route.api);
      attributes[A.ATTR_GEN_AI_REQUEST_MODEL] = turn.route.model;
      attributes[A.ATTR_KLBR_ROUTE] = turn.route.name;
    }
    const span = this.tracer.startSpan(`invoke_agent ${turn.sessionId}`, { kind: SpanKind.INTERNAL, startTime: turn.atMs, attributes, links, root: true }, ROOT_CONTEXT);
    this.turns.set(turn.sessionId, span);
  }

  /** The turn ended: its root span ends at the recorded time. */
  turnEnded(end: TurnEnd): void {
    const span = this.turns.get(end.sessionId);
    if (!span) return;
    this.turns.delete(end.sessionId);
    span.setAttribute(A.ATTR_KLBR_TURN_END_REASON, end.reason);
    if (end.reason === "turn_failed" || end.reason === "route_failed") {
      span.setAttribute(A.ATTR_ERROR_TYPE, end.reason);
      span.setStatus({ code: SpanStatusCode.ERROR, message: end.reason });
    }
    span.end(end.atMs);
  }

  /** A model request was closed (answered or failed): its `chat <model>` span, whole. */
  modelRequest(record: ModelRequestRecord): void {
    const attributes: Attributes = {
      [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_NAME_VALUE_CHAT,
      [A.ATTR_GEN_AI_PROVIDER_NAME]: providerOf(record.api),
      [A.ATTR_GEN_AI_REQUEST_MODEL]: record.model,
      [A.ATTR_GEN_AI_CONVERSATION_ID]: record.sessionId,
      [A.ATTR_KLBR_ROUTE]: record.route,
      [A.ATTR_KLBR_MODEL_REQUEST_ID]: record.id,
      [A.ATTR_KLBR_HEADER_RECORD_ID]: record.headerRecordId,
      [A.ATTR_KLBR_REQUEST_BODY_BYTES]: record.bodyBytes,
      [A.ATTR_KLBR_REQUEST_SHARED_PREFIX_BYTES]: record.sharedPrefixBytes,
    };
    if (record.responseModel) attributes[A.ATTR_GEN_AI_RESPONSE_MODEL] = record.responseModel;
    if (record.reply?.stop) attributes[A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [record.reply.stop];
    if (record.retries > 0) attributes[A.ATTR_HTTP_REQUEST_RESEND_COUNT] = record.retries;
    // Exactly as @klbr/usage recorded them: a count the route did not send stays absent.
    const usage = record.usage;
    if (usage) {
      setCount(attributes, A.ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.prompt_tokens);
      setCount(attributes, A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.completion_tokens);
      setCount(attributes, A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cached_prompt_tokens);
      setCount(attributes, A.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, usage.cache_write_tokens);
      setCount(attributes, A.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning_tokens);
    }
    if (this.captureContent) {
      const messages = safely(() => record.messages?.());
      if (messages !== undefined) attributes[A.ATTR_GEN_AI_INPUT_MESSAGES] = JSON.stringify(messages);
      if (record.reply) attributes[A.ATTR_GEN_AI_OUTPUT_MESSAGES] = JSON.stringify([outputMessage(record.reply)]);
    }
    const span = this.tracer.startSpan(`chat ${record.model}`, { kind: SpanKind.CLIENT, startTime: record.startedAtMs, attributes }, this.parentOf(record.sessionId));
    if (record.status === "error") {
      const type = record.error?.code ?? "error";
      span.setAttribute(A.ATTR_ERROR_TYPE, type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.error?.message ?? type });
    }
    span.end(record.endedAtMs ?? record.startedAtMs);
  }

  /** A cell began: its `execute_tool python` span opens (peers it asks can link to it at once). */
  cellStarted(cell: CellStart): void {
    const attributes: Attributes = {
      [A.ATTR_GEN_AI_OPERATION_NAME]: A.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [A.ATTR_GEN_AI_TOOL_NAME]: "python",
      [A.ATTR_GEN_AI_TOOL_TYPE]: "function",
      [A.ATTR_GEN_AI_CONVERSATION_ID]: cell.sessionId,
      [A.ATTR_KLBR_EXECUTION_ID]: cell.executionId,
    };
    if (cell.callId !== null) attributes[A.ATTR_GEN_AI_TOOL_CALL_ID] = cell.callId;
    const span = this.tracer.startSpan("execute_tool python", { kind: SpanKind.INTERNAL, startTime: cell.atMs, attributes }, this.parentOf(cell.sessionId));
    this.cells.set(cell.executionId, span);
  }

  /** Whether a cell's span is open (a cell no turn ran, such as an operator's, has none). */
  tracks(executionId: string): boolean {
    return this.cells.has(executionId);
  }

  /** A cell's execution was closed: status, the rung that ended it, its host requests; the span ends. */
  cellFinished(cell: CellRecord): void {
    const span = this.cells.get(cell.executionId);
    if (!span) return;
    this.cells.delete(cell.executionId);
    this.linkable.set(cell.executionId, span.spanContext());
    if (this.linkable.size > LINKABLE_CELLS) this.linkable.delete(this.linkable.keys().next().value!);
    span.setAttribute(A.ATTR_KLBR_CELL_STATUS, cell.status);
    if (cell.endedBy) span.setAttribute(A.ATTR_KLBR_CELL_ENDED_BY, cell.endedBy);
    if (cell.truncatedBytes) span.setAttribute(A.ATTR_KLBR_CELL_TRUNCATED_BYTES, cell.truncatedBytes);
    if (this.captureContent) {
      span.setAttribute(A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, JSON.stringify({ code: cell.code }));
      span.setAttribute(A.ATTR_GEN_AI_TOOL_CALL_RESULT, JSON.stringify({ output: cell.output ?? [], error: cell.error }));
    }
    if (cell.status === "error" || cell.status === "failed") {
      const type = cell.status === "error" ? exceptionType(cell.error) : (cell.endedBy ?? "failed");
      span.setAttribute(A.ATTR_ERROR_TYPE, type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.captureContent ? (cell.error ?? type) : type });
    }
    const parent = trace.setSpan(context.active(), span);
    for (const r of cell.hostRequests) this.hostRequest(span, parent, r);
    span.end(cell.endedAtMs ?? cell.startedAtMs);
  }

  /** End every open span (the host is stopping): turns end as `host_stopped`. */
  close(atMs: number): void {
    for (const [id, span] of this.cells) {
      span.setAttribute(A.ATTR_KLBR_CELL_STATUS, "host_stopped");
      span.end(atMs);
      this.cells.delete(id);
    }
    for (const sessionId of [...this.turns.keys()]) this.turnEnded({ sessionId, reason: "host_stopped", atMs });
  }

  private parentOf(sessionId: string) {
    const turn = this.turns.get(sessionId);
    return turn ? trace.setSpan(ROOT_CONTEXT, turn) : ROOT_CONTEXT;
  }

  /** One host request: an event on its cell; workspace commands and peer requests also as child spans. */
  private hostRequest(cell: Span, parent: ReturnType<typeof trace.setSpan>, r: HostRequestRecord): void {
    const status = replyStatus(r.reply);
    const attributes: Attributes = { [A.ATTR_KLBR_HOST_REQUEST_ID]: r.requestId, [A.ATTR_KLBR_HOST_REQUEST_STATUS]: status };
    if (r.repliedAtMs !== null) attributes[A.ATTR_KLBR_HOST_REQUEST_DURATION_MS] = r.repliedAtMs - r.requestedAtMs;
    cell.addEvent(r.method, attributes, r.requestedAtMs);
    const child = childSpanOf(r);
    if (!child) return;
    const span = this.tracer.startSpan(child.name, { kind: SpanKind.INTERNAL, startTime: r.requestedAtMs, attributes: { ...attributes, ...child.attributes(this.captureContent) } }, parent);
    if (status !== "ok") {
      span.setAttribute(A.ATTR_ERROR_TYPE, status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: status });
    }
    span.end(r.repliedAtMs ?? r.requestedAtMs);
  }
}

/** The child span a host request gets, when it is a workspace command or a peer request. */
function childSpanOf(r: HostRequestRecord): { name: string; attributes: (content: boolean) => Attributes } | null {
  const params = (r.request.params ?? r.request) as Record<string, unknown>;
  if (r.method === "workspace.run") {
    const argv = Array.isArray(params.argv) ? params.argv.map(String) : typeof params.command === "string" ? [params.command] : [];
    return {
      name: argv[0] ? `workspace.run ${argv[0]}` : "workspace.run",
      attributes: (content) => {
        const out: Attributes = {};
        if (argv[0]) out[A.ATTR_PROCESS_COMMAND] = argv[0];
        if (content && argv.length > 0) out[A.ATTR_PROCESS_COMMAND_ARGS] = argv;
        const code = replyValue(r.reply)?.exit_code;
        if (typeof code === "number") out[A.ATTR_PROCESS_EXIT_CODE] = code;
        return out;
      },
    };
  }
  if (r.method === "peer.send") {
    const peer = typeof params.peer_id === "string" ? params.peer_id : "";
    return {
      name: peer ? `${r.method} ${peer}` : r.method,
      attributes: () => {
        const out: Attributes = {};
        if (peer) out[A.ATTR_KLBR_PEER_ID] = peer;
        const id = params.request_id;
        if (typeof id === "string") out[A.ATTR_KLBR_PEER_REQUEST_ID] = id;
        return out;
      },
    };
  }
  return null;
}

/** `ok`, or the reply's error code (a host reply is `{kind: "ok", value}` or `{kind: "error", code, message}`). */
function replyStatus(reply: Record<string, unknown> | null): string {
  if (!reply) return "unanswered";
  if (reply.kind === "error") return typeof reply.code === "string" ? reply.code : "error";
  return "ok";
}

/** An ok reply's value, when it is an object. */
function replyValue(reply: Record<string, unknown> | null): Record<string, unknown> | null {
  const value = reply?.kind === "ok" ? reply.value : null;
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
}

/** The Python exception's class from a cell's error text (`ZeroDivisionError: ...` -> ZeroDivisionError). */
export function exceptionType(error: string | null): string {
  const match = error ? /^([A-Za-z_][\w.]*)(:|$)/m.exec(error.trim().split("\n").at(-1) ?? "") : null;
  return match?.[1] ?? "error";
}

function setCount(attributes: Attributes, name: string, value: number | undefined): void {
  if (value !== undefined) attributes[name] = value;
}

function safely<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** A reply in the GenAI output-message shape: text and tool calls as parts, with the finish reason. */
function outputMessage(reply: NonNullable<ModelRequestRecord["reply"]>): unknown {
  const parts: unknown[] = [];
  if (reply.text) parts.push({ type: "text", content: reply.text });
  for (const c of reply.calls ?? []) parts.push({ type: "tool_call", id: c.call_id ?? c.id ?? null, name: c.name ?? "python", arguments: c.arguments });
  return { role: "assistant", parts, finish_reason: reply.stop ?? "stop" };
}
