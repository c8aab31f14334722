import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter as SdkMemoryExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, test } from "vitest";
import * as A from "./attributes";
import type { TelemetryConfig } from "./config";
import { startExport } from "./pipeline";
import type { CellRecord, ModelRequestRecord } from "./records";
import { exceptionType, SpanRecorder } from "./recorder";

/** The SDK's in-memory exporter, except that shutdown keeps what it holds (the SDK's clears it). */
class InMemorySpanExporter extends SdkMemoryExporter {
  override shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const config = (captureContent = false): TelemetryConfig => ({ endpoint: "http://127.0.0.1:1/v1/traces", protocol: "http/protobuf", unknownProtocol: null, captureContent, batch: {} });

let restoreEnv: Array<() => void> = [];
afterEach(() => {
  for (const r of restoreEnv.splice(0)) r();
});
function setEnv(name: string, value: string) {
  const old = process.env[name];
  process.env[name] = value;
  restoreEnv.push(() => (old === undefined ? delete process.env[name] : (process.env[name] = old)));
}

async function record(build: (r: SpanRecorder) => void, captureContent = false): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const pipeline = startExport(config(captureContent), { exporter: memory, warn: () => {} });
  build(new SpanRecorder(pipeline.tracer, captureContent));
  await pipeline.shutdown(5000);
  expect(pipeline.counts()).toMatchObject({ dropped: 0, pending: 0 });
  return memory.getFinishedSpans();
}

const request = (over: Partial<ModelRequestRecord> = {}): ModelRequestRecord => ({
  id: "mr_1",
  sessionId: "root",
  route: "scripted",
  api: "chat",
  model: "scripted-1",
  headerRecordId: 3,
  bodyBytes: 1200,
  sharedPrefixBytes: 800,
  status: "ok",
  error: null,
  retries: 0,
  usage: { shape: "openai_chat", raw: [], flags: [], prompt_tokens: 300, completion_tokens: 20, cached_prompt_tokens: 200 },
  reply: { text: "Let me compute.", calls: [{ id: "call_1", name: "python", arguments: '{"code":"1+1"}' }], stop: "tool_calls" },
  startedAtMs: 1_700_000_000_000,
  endedAtMs: 1_700_000_000_250,
  messages: () => [{ role: "user", content: "what is 1+1?" }],
  ...over,
});

const cell = (over: Partial<CellRecord> = {}): CellRecord => ({
  sessionId: "root",
  executionId: "ex_1",
  code: "1+1",
  status: "ok",
  output: [{ stream: "stdout", text: "2\n" }],
  truncatedBytes: 0,
  error: null,
  endedBy: null,
  startedAtMs: 1_700_000_000_300,
  endedAtMs: 1_700_000_000_400,
  hostRequests: [],
  ...over,
});

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const ms = (s: ReadableSpan, which: "startTime" | "endTime") => s[which][0] * 1000 + s[which][1] / 1e6;

describe("SpanRecorder (C18 spans from the log's records)", () => {
  test("one trace per turn: invoke_agent at the root, chat and execute_tool its children, times from the records", async () => {
    const spans = await record((r) => {
      r.turnStarted({ sessionId: "root", turnId: "turn_1", atMs: 1_700_000_000_000, route: { name: "scripted", api: "chat", model: "scripted-1" } });
      r.modelRequest(request());
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: "call_1", atMs: 1_700_000_000_300 });
      expect([r.tracks("ex_1"), r.tracks("ex_operator")]).toEqual([true, false]);
      r.cellFinished(cell());
      r.cellFinished(cell({ executionId: "ex_operator" }));
      expect(r.tracks("ex_1")).toBe(false);
      r.turnEnded({ sessionId: "root", reason: "model_ended_turn", atMs: 1_700_000_000_500 });
      r.turnStarted({ sessionId: "root", turnId: "turn_2", atMs: 1_700_000_001_000 });
      r.turnEnded({ sessionId: "root", reason: "model_ended_turn", atMs: 1_700_000_001_100 });
    });
    const [root, second] = byName(spans, "invoke_agent root");
    const chat = byName(spans, "chat scripted-1")[0]!;
    const tool = byName(spans, "execute_tool python")[0]!;
    expect(spans).toHaveLength(4);
    expect(root!.parentSpanContext).toBeUndefined();
    expect(chat.parentSpanContext?.spanId).toBe(root!.spanContext().spanId);
    expect(tool.parentSpanContext?.spanId).toBe(root!.spanContext().spanId);
    expect(new Set([chat, tool].map((s) => s.spanContext().traceId))).toEqual(new Set([root!.spanContext().traceId]));
    expect(second!.spanContext().traceId).not.toBe(root!.spanContext().traceId);
    expect(root!.attributes).toMatchObject({
      [A.ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
      [A.ATTR_GEN_AI_CONVERSATION_ID]: "root",
      [A.ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [A.ATTR_KLBR_TURN_ID]: "turn_1",
      [A.ATTR_KLBR_TURN_END_REASON]: "model_ended_turn",
    });
    expect([ms(root!, "startTime"), ms(root!, "endTime")]).toEqual([1_700_000_000_000, 1_700_000_000_500]);
    expect([ms(chat, "startTime"), ms(chat, "endTime")]).toEqual([1_700_000_000_000, 1_700_000_000_250]);
    expect(chat.kind).toBe(SpanKind.CLIENT);
  });

  test("chat: provider, models, conversation, tokens exactly as recorded (absent stays absent), retries, finish reason", async () => {
    const spans = await record((r) => {
      r.modelRequest(request({ retries: 2, reply: { text: "", calls: [], stop: "stop" }, responseModel: "scripted-1-0613" }));
      r.modelRequest(request({ id: "mr_2", api: "anthropic", usage: { shape: "anthropic", raw: [], flags: [], prompt_tokens: 10, cache_write_tokens: 7, cached_prompt_tokens: 0 } }));
      r.modelRequest(request({ id: "mr_3", usage: null }));
    });
    const [first, second, third] = spans;
    expect(first!.attributes).toMatchObject({
      [A.ATTR_GEN_AI_OPERATION_NAME]: "chat",
      [A.ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [A.ATTR_GEN_AI_REQUEST_MODEL]: "scripted-1",
      [A.ATTR_GEN_AI_RESPONSE_MODEL]: "scripted-1-0613",
      [A.ATTR_GEN_AI_CONVERSATION_ID]: "root",
      [A.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 300,
      [A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 20,
      [A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 200,
      [A.ATTR_HTTP_REQUEST_RESEND_COUNT]: 2,
      [A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["stop"],
      [A.ATTR_KLBR_HEADER_RECORD_ID]: 3,
    });
    expect(first!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS);
    expect(first!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS);
    expect(second!.attributes).toMatchObject({ [A.ATTR_GEN_AI_PROVIDER_NAME]: "anthropic", [A.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: 7, [A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 0 });
    expect(second!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS);
    expect(second!.attributes).not.toHaveProperty(A.ATTR_HTTP_REQUEST_RESEND_COUNT);
    expect(Object.keys(third!.attributes).filter((k) => k.startsWith("gen_ai.usage."))).toEqual([]);
  });

  test("a failed request: error status and error.type from the recorded code", async () => {
    const [span] = await record((r) => r.modelRequest(request({ status: "error", error: { code: "DRIVER_ROUTE_FAILED", message: "HTTP 500", status: 500 }, usage: null, reply: null, retries: 3 })));
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: "HTTP 500" });
    expect(span!.attributes).toMatchObject({ [A.ATTR_ERROR_TYPE]: "DRIVER_ROUTE_FAILED", [A.ATTR_HTTP_REQUEST_RESEND_COUNT]: 3 });
  });

  test("execute_tool: status, the rung that ended it, the call id, host requests as events, workspace commands and peer requests as children", async () => {
    const spans = await record((r) => {
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: "call_9", atMs: 1000 });
      r.cellFinished(
        cell({
          status: "interrupted",
          endedBy: "hard_stop",
          startedAtMs: 1000,
          endedAtMs: 5000,
          hostRequests: [
            { requestId: "r1", method: "runtime.send", request: { method: "runtime.send", params: { text: "hi" } }, reply: { kind: "ok", value: { status: "confirmed" } }, requestedAtMs: 1100, repliedAtMs: 1150 },
            { requestId: "r2", method: "workspace.run", request: { method: "workspace.run", params: { argv: ["ls", "-la"] } }, reply: { kind: "ok", value: { exit_code: 0 } }, requestedAtMs: 1200, repliedAtMs: 1300 },
            { requestId: "r3", method: "peer.send", request: { method: "peer.send", params: { peer_id: "p1", request_id: "q1", content: "secret" } }, reply: { kind: "error", code: "conflict", message: "no" }, requestedAtMs: 1400, repliedAtMs: 1410 },
          ],
        }),
      );
    });
    const tool = byName(spans, "execute_tool python")[0]!;
    expect(tool.attributes).toMatchObject({
      [A.ATTR_GEN_AI_OPERATION_NAME]: "execute_tool",
      [A.ATTR_GEN_AI_TOOL_NAME]: "python",
      [A.ATTR_GEN_AI_TOOL_CALL_ID]: "call_9",
      [A.ATTR_KLBR_CELL_STATUS]: "interrupted",
      [A.ATTR_KLBR_CELL_ENDED_BY]: "hard_stop",
      [A.ATTR_KLBR_EXECUTION_ID]: "ex_1",
    });
    expect(tool.events.map((e) => [e.name, e.attributes?.[A.ATTR_KLBR_HOST_REQUEST_STATUS]])).toEqual([
      ["runtime.send", "ok"],
      ["workspace.run", "ok"],
      ["peer.send", "conflict"],
    ]);
    const run = byName(spans, "workspace.run ls")[0]!;
    expect(run.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(run.attributes).toMatchObject({ [A.ATTR_PROCESS_COMMAND]: "ls", [A.ATTR_PROCESS_EXIT_CODE]: 0 });
    expect(run.attributes).not.toHaveProperty(A.ATTR_PROCESS_COMMAND_ARGS);
    const peer = byName(spans, "peer.send p1")[0]!;
    expect(peer.attributes).toMatchObject({ [A.ATTR_KLBR_PEER_ID]: "p1", [A.ATTR_KLBR_PEER_REQUEST_ID]: "q1", [A.ATTR_ERROR_TYPE]: "conflict" });
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.events]))).not.toContain("secret");
  });

  test("a cell that raised: error status, error.type the exception class", async () => {
    const [span] = await record((r) => {
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: null, atMs: 1000 });
      r.cellFinished(cell({ status: "error", error: "Traceback (most recent call last):\n  File \"<cell>\", line 1\nZeroDivisionError: division by zero" }));
    });
    expect(span!.attributes).toMatchObject({ [A.ATTR_ERROR_TYPE]: "ZeroDivisionError" });
    expect(span!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_TOOL_CALL_ID);
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: "ZeroDivisionError" });
  });

  test("message contents: absent by default, present with capture on", async () => {
    const run = (r: SpanRecorder) => {
      r.modelRequest(request());
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: "call_1", atMs: 1000 });
      r.cellFinished(cell({ code: "print('the secret')", output: [{ stream: "stdout", text: "the secret\n" }] }));
    };
    const off = await record(run);
    expect(JSON.stringify(off.map((s) => s.attributes))).not.toMatch(/secret|what is 1\+1|Let me compute/);
    for (const s of off) for (const k of [A.ATTR_GEN_AI_INPUT_MESSAGES, A.ATTR_GEN_AI_OUTPUT_MESSAGES, A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, A.ATTR_GEN_AI_TOOL_CALL_RESULT]) expect(s.attributes).not.toHaveProperty(k);
    const on = await record(run, true);
    const chat = byName(on, "chat scripted-1")[0]!;
    expect(JSON.parse(chat.attributes[A.ATTR_GEN_AI_INPUT_MESSAGES] as string)).toEqual([{ role: "user", content: "what is 1+1?" }]);
    expect(JSON.parse(chat.attributes[A.ATTR_GEN_AI_OUTPUT_MESSAGES] as string)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Let me compute." }, { type: "tool_call", id: "call_1", name: "python", arguments: '{"code":"1+1"}' }], finish_reason: "tool_calls" },
    ]);
    const tool = byName(on, "execute_tool python")[0]!;
    expect(JSON.parse(tool.attributes[A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] as string)).toEqual({ code: "print('the secret')" });
    expect(tool.attributes[A.ATTR_GEN_AI_TOOL_CALL_RESULT]).toContain("the secret");
  });

  test("a turn answering a peer request links to the cell that sent it", async () => {
    const spans = await record((r) => {
      r.turnStarted({ sessionId: "root", turnId: "turn_1", atMs: 1000 });
      r.cellStarted({ sessionId: "root", executionId: "ex_opener", callId: "c", atMs: 1100 });
      r.turnStarted({ sessionId: "peer-1", turnId: "turn_2", atMs: 1200, causedBy: ["ex_opener", "ex_unknown"] });
      r.turnEnded({ sessionId: "peer-1", reason: "model_ended_turn", atMs: 1300 });
      r.cellFinished(cell({ executionId: "ex_opener", startedAtMs: 1100, endedAtMs: 1400 }));
      r.turnEnded({ sessionId: "root", reason: "yielded", atMs: 1500 });
    });
    const opener = byName(spans, "execute_tool python")[0]!;
    const peerTurn = byName(spans, "invoke_agent peer-1")[0]!;
    expect(peerTurn.links.map((l) => l.context.spanId)).toEqual([opener.spanContext().spanId]);
  });

  test("close ends open spans: turns as host_stopped", async () => {
    const spans = await record((r) => {
      r.turnStarted({ sessionId: "root", turnId: "turn_1", atMs: 1000 });
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: null, atMs: 1100 });
      r.close(2000);
    });
    expect(spans.map((s) => [s.name, s.attributes[A.ATTR_KLBR_TURN_END_REASON] ?? s.attributes[A.ATTR_KLBR_CELL_STATUS]])).toEqual([
      ["execute_tool python", "host_stopped"],
      ["invoke_agent root", "host_stopped"],
    ]);
  });

  test("service.name is klbr unless OTEL_SERVICE_NAME says otherwise", async () => {
    const [plain] = await record((r) => r.modelRequest(request()));
    expect(plain!.resource.attributes[A.ATTR_SERVICE_NAME]).toBe("klbr");
    setEnv("OTEL_SERVICE_NAME", "agent-7");
    const [named] = await record((r) => r.modelRequest(request()));
    expect(named!.resource.attributes[A.ATTR_SERVICE_NAME]).toBe("agent-7");
  });

  test("exceptionType reads the last line of a traceback", () => {
    expect(exceptionType("ValueError: bad")).toBe("ValueError");
    expect(exceptionType("Traceback ...\nmodule.CustomError: x")).toBe("module.CustomError");
    expect(exceptionType("KeyboardInterrupt")).toBe("KeyboardInterrupt");
    expect(exceptionType(null)).toBe("error");
    expect(exceptionType("  ")).toBe("error");
  });
});
