import { SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter as SdkMemoryExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, test } from "vitest";
import * as A from "./attributes";
import { startExport } from "./pipeline";
import type { CellRecord, HostRequestRecord, ModelRequestRecord } from "./records";
import { exceptionType, SpanRecorder } from "./recorder";

// The edges the mutation run found untested (issue 38): each branch of the recorder seen on a span.

class InMemorySpanExporter extends SdkMemoryExporter {
  override shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function record(build: (r: SpanRecorder) => void, captureContent = false): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const pipeline = startExport({ endpoint: "http://127.0.0.1:1/v1/traces", protocol: "http/protobuf", unknownProtocol: null, captureContent, batch: {} }, { exporter: memory, warn: () => {} });
  build(new SpanRecorder(pipeline.tracer, captureContent));
  await pipeline.shutdown(5000);
  return memory.getFinishedSpans();
}

const request = (over: Partial<ModelRequestRecord> = {}): ModelRequestRecord => ({
  id: "mr_1", sessionId: "root", route: "r", api: "chat", model: "m", headerRecordId: 1, bodyBytes: 1, sharedPrefixBytes: 0,
  status: "ok", error: null, retries: 0, usage: null, reply: null, startedAtMs: T + 1000, endedAtMs: T + 2000, ...over,
});
const cell = (over: Partial<CellRecord> = {}): CellRecord => ({
  sessionId: "root", executionId: "ex_1", code: "x", status: "ok", output: null, truncatedBytes: null, error: null, endedBy: null,
  startedAtMs: T + 1000, endedAtMs: T + 2000, hostRequests: [], ...over,
});
/** Times as the log has them: epoch milliseconds (the SDK reads a small number as performance.now()). */
const T = 1_700_000_000_000;
const ms = (s: ReadableSpan, which: "startTime" | "endTime") => s[which][0] * 1000 + s[which][1] / 1e6;
const hr = (over: Partial<HostRequestRecord>): HostRequestRecord => ({ requestId: "r", method: "workspace.run", request: {}, reply: { kind: "ok", value: {} }, requestedAtMs: T + 1100, repliedAtMs: T + 1300, ...over });

/** The spans of one cell finished with `over`, after it started. */
function cellSpans(over: Partial<CellRecord>, captureContent = false, callId: string | null = "c") {
  return record((r) => {
    r.cellStarted({ sessionId: "root", executionId: over.executionId ?? "ex_1", callId, atMs: T + 1000 });
    r.cellFinished(cell(over));
  }, captureContent);
}

describe("turns", () => {
  test("a second turn of a session ends the first as superseded, at the new turn's start", async () => {
    const spans = await record((r) => {
      r.turnStarted({ sessionId: "s", turnId: "t1", atMs: T + 1000 });
      r.turnStarted({ sessionId: "s", turnId: "t2", atMs: T + 1500 });
      r.turnEnded({ sessionId: "s", reason: "yielded", atMs: T + 2000 });
    });
    const [first, second] = spans;
    expect(first!.attributes).toMatchObject({ [A.ATTR_KLBR_TURN_ID]: "t1", [A.ATTR_KLBR_TURN_END_REASON]: "superseded", [A.ATTR_GEN_AI_AGENT_NAME]: "klbr" });
    expect(ms(first!, "endTime")).toBe(T + 1500);
    expect(second!.attributes[A.ATTR_KLBR_TURN_END_REASON]).toBe("yielded");
    expect(second!.status.code).toBe(SpanStatusCode.UNSET);
  });

  test("turn_failed and route_failed are errors; other reasons are not; the route names provider, model and route", async () => {
    const spans = await record((r) => {
      r.turnStarted({ sessionId: "a", turnId: "t1", atMs: T + 1, route: { name: "claude", api: "anthropic", model: "c-1" } });
      r.turnEnded({ sessionId: "a", reason: "turn_failed", atMs: T + 2 });
      r.turnStarted({ sessionId: "b", turnId: "t2", atMs: T + 1 });
      r.turnEnded({ sessionId: "b", reason: "route_failed", atMs: T + 2 });
      r.turnStarted({ sessionId: "c", turnId: "t3", atMs: T + 1 });
      r.turnEnded({ sessionId: "c", reason: "max_cells_per_turn", atMs: T + 2 });
      r.turnEnded({ sessionId: "never", reason: "turn_failed", atMs: T + 2 });
    });
    expect(spans.map((s) => [s.attributes[A.ATTR_ERROR_TYPE], s.status])).toEqual([
      ["turn_failed", { code: SpanStatusCode.ERROR, message: "turn_failed" }],
      ["route_failed", { code: SpanStatusCode.ERROR, message: "route_failed" }],
      [undefined, { code: SpanStatusCode.UNSET }],
    ]);
    expect(spans[0]!.attributes).toMatchObject({ [A.ATTR_GEN_AI_PROVIDER_NAME]: "anthropic", [A.ATTR_GEN_AI_REQUEST_MODEL]: "c-1", [A.ATTR_KLBR_ROUTE]: "claude" });
    expect(spans[2]!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_PROVIDER_NAME);
  });

  test("a peer turn links to a cell still running, and to one that finished before it", async () => {
    const spans = await record((r) => {
      r.cellStarted({ sessionId: "root", executionId: "ex_done", callId: null, atMs: T + 1 });
      r.cellFinished(cell({ executionId: "ex_done" }));
      r.cellStarted({ sessionId: "root", executionId: "ex_open", callId: null, atMs: T + 1 });
      r.turnStarted({ sessionId: "peer", turnId: "t", atMs: T + 2, causedBy: ["ex_open", "ex_done"] });
      r.turnEnded({ sessionId: "peer", reason: "yielded", atMs: T + 3 });
      r.cellFinished(cell({ executionId: "ex_open" }));
    });
    const id = (name: string) => spans.find((s) => s.attributes[A.ATTR_KLBR_EXECUTION_ID] === name)!.spanContext().spanId;
    const peer = spans.find((s) => s.name === "invoke_agent peer")!;
    expect(peer.links.map((l) => l.context.spanId)).toEqual([id("ex_open"), id("ex_done")]);
  });

  test("finished cells stay linkable up to 1024, the oldest forgotten first", async () => {
    const spans = await record((r) => {
      for (let i = 0; i <= 1024; i++) {
        r.cellStarted({ sessionId: "root", executionId: `ex_${i}`, callId: null, atMs: T + 1 });
        r.cellFinished(cell({ executionId: `ex_${i}` }));
      }
      r.turnStarted({ sessionId: "peer", turnId: "t", atMs: T + 2, causedBy: ["ex_0", "ex_1", "ex_1024"] });
      r.turnEnded({ sessionId: "peer", reason: "yielded", atMs: T + 3 });
    });
    const id = (name: string) => spans.find((s) => s.attributes[A.ATTR_KLBR_EXECUTION_ID] === name)!.spanContext().spanId;
    const peer = spans.find((s) => s.name === "invoke_agent peer")!;
    expect(peer.links.map((l) => l.context.spanId)).toEqual([id("ex_1"), id("ex_1024")]);
  });
});

describe("chat spans", () => {
  test("an error without a recorded error: type and message `error`; ended at its start when it has no end", async () => {
    const [span] = await record((r) => r.modelRequest(request({ status: "error", error: null, endedAtMs: null })));
    expect(span!.attributes[A.ATTR_ERROR_TYPE]).toBe("error");
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: "error" });
    expect(ms(span!, "endTime")).toBe(T + 1000);
  });

  test("an ok request: no error, no response model or finish reason or resend count it did not have", async () => {
    const [span] = await record((r) => r.modelRequest(request({ responseModel: null, reply: { text: "hi", stop: null } })));
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    for (const k of [A.ATTR_ERROR_TYPE, A.ATTR_GEN_AI_RESPONSE_MODEL, A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS, A.ATTR_HTTP_REQUEST_RESEND_COUNT]) expect(span!.attributes).not.toHaveProperty(k);
    expect(span!.attributes).toMatchObject({ [A.ATTR_KLBR_REQUEST_BODY_BYTES]: 1, [A.ATTR_KLBR_REQUEST_SHARED_PREFIX_BYTES]: 0, [A.ATTR_KLBR_MODEL_REQUEST_ID]: "mr_1", [A.ATTR_KLBR_ROUTE]: "r" });
  });

  test("captured: no messages reader, a throwing one, no reply; a reply's parts take call_id, then id, then null, and name python by default", async () => {
    const spans = await record((r) => {
      r.modelRequest(request({ id: "a", messages: undefined, reply: null }));
      r.modelRequest(request({ id: "b", messages: () => { throw new Error("row gone"); }, reply: { calls: [{ call_id: "x", id: "y", name: "n", arguments: "{}" }, { id: "y" }, {}] } }));
    }, true);
    const [a, b] = spans;
    expect(a!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_INPUT_MESSAGES);
    expect(a!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_OUTPUT_MESSAGES);
    expect(b!.attributes).not.toHaveProperty(A.ATTR_GEN_AI_INPUT_MESSAGES);
    expect(JSON.parse(b!.attributes[A.ATTR_GEN_AI_OUTPUT_MESSAGES] as string)).toEqual([
      { role: "assistant", finish_reason: "stop", parts: [{ type: "tool_call", id: "x", name: "n", arguments: "{}" }, { type: "tool_call", id: "y", name: "python" }, { type: "tool_call", id: null, name: "python" }] },
    ]);
  });
});

describe("execute_tool spans", () => {
  test("the tool's type, no call id without one, no ended_by or truncation when none, ended at its start without an end", async () => {
    const [span] = await cellSpans({ endedAtMs: null, truncatedBytes: 0 }, false, null);
    expect(span!.attributes[A.ATTR_GEN_AI_TOOL_TYPE]).toBe("function");
    for (const k of [A.ATTR_GEN_AI_TOOL_CALL_ID, A.ATTR_KLBR_CELL_ENDED_BY, A.ATTR_KLBR_CELL_TRUNCATED_BYTES, A.ATTR_ERROR_TYPE]) expect(span!.attributes).not.toHaveProperty(k);
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    expect(ms(span!, "endTime")).toBe(T + 1000);
    const [cut] = await cellSpans({ truncatedBytes: 77 });
    expect(cut!.attributes[A.ATTR_KLBR_CELL_TRUNCATED_BYTES]).toBe(77);
  });

  test("failed: the rung that ended it is the error type (failed without one); with capture the message is the error text", async () => {
    const [byRung] = await cellSpans({ status: "failed", endedBy: "hard_stop", error: "worker died" });
    expect(byRung!.attributes[A.ATTR_ERROR_TYPE]).toBe("hard_stop");
    expect(byRung!.status).toEqual({ code: SpanStatusCode.ERROR, message: "hard_stop" });
    const [plain] = await cellSpans({ status: "failed" }, true);
    expect(plain!.attributes[A.ATTR_ERROR_TYPE]).toBe("failed");
    expect(plain!.status).toEqual({ code: SpanStatusCode.ERROR, message: "failed" });
    const [told] = await cellSpans({ status: "error", error: "ValueError: no" }, true);
    expect(told!.status).toEqual({ code: SpanStatusCode.ERROR, message: "ValueError: no" });
    expect(JSON.parse(told!.attributes[A.ATTR_GEN_AI_TOOL_CALL_RESULT] as string)).toEqual({ output: [], error: "ValueError: no" });
    const [interrupted] = await cellSpans({ status: "interrupted", endedBy: "sigint" });
    expect(interrupted!.status.code).toBe(SpanStatusCode.UNSET);
  });

  test("host requests: duration, unanswered and error replies, child span times and errors", async () => {
    const spans = await cellSpans({
      hostRequests: [
        hr({ requestId: "a", request: { command: "make" }, reply: null, repliedAtMs: null }),
        hr({ requestId: "b", request: { params: {} }, reply: { kind: "error", message: "no code" }, requestedAtMs: T + 1200, repliedAtMs: T + 1250 }),
        hr({ requestId: "c", method: "peer.send", request: { params: { peer_id: 7, request_id: 9 } }, reply: { kind: "ok", value: "fine" } }),
        hr({ requestId: "d", method: "runtime.send", reply: { kind: "ok", value: null } }),
      ],
    });
    const tool = spans.find((s) => s.name === "execute_tool python")!;
    expect(tool.events.map((e) => [e.name, e.attributes])).toEqual([
      ["workspace.run", { [A.ATTR_KLBR_HOST_REQUEST_ID]: "a", [A.ATTR_KLBR_HOST_REQUEST_STATUS]: "unanswered" }],
      ["workspace.run", { [A.ATTR_KLBR_HOST_REQUEST_ID]: "b", [A.ATTR_KLBR_HOST_REQUEST_STATUS]: "error", [A.ATTR_KLBR_HOST_REQUEST_DURATION_MS]: 50 }],
      ["peer.send", { [A.ATTR_KLBR_HOST_REQUEST_ID]: "c", [A.ATTR_KLBR_HOST_REQUEST_STATUS]: "ok", [A.ATTR_KLBR_HOST_REQUEST_DURATION_MS]: 200 }],
      ["runtime.send", { [A.ATTR_KLBR_HOST_REQUEST_ID]: "d", [A.ATTR_KLBR_HOST_REQUEST_STATUS]: "ok", [A.ATTR_KLBR_HOST_REQUEST_DURATION_MS]: 200 }],
    ]);
    expect(spans.map((s) => s.name)).toEqual(["workspace.run make", "workspace.run", "peer.send", "execute_tool python"]);
    const [make, bare, peer] = spans;
    expect(make!.attributes).toMatchObject({ [A.ATTR_PROCESS_COMMAND]: "make", [A.ATTR_ERROR_TYPE]: "unanswered" });
    expect(make!.status).toEqual({ code: SpanStatusCode.ERROR, message: "unanswered" });
    expect([ms(make!, "startTime"), ms(make!, "endTime")]).toEqual([T + 1100, T + 1100]);
    expect(bare!.attributes).not.toHaveProperty(A.ATTR_PROCESS_COMMAND);
    expect(bare!.attributes).not.toHaveProperty(A.ATTR_PROCESS_EXIT_CODE);
    expect([ms(bare!, "startTime"), ms(bare!, "endTime")]).toEqual([T + 1200, T + 1250]);
    expect(peer!.status.code).toBe(SpanStatusCode.UNSET);
    expect(peer!.attributes).not.toHaveProperty(A.ATTR_KLBR_PEER_ID);
    expect(peer!.attributes).not.toHaveProperty(A.ATTR_KLBR_PEER_REQUEST_ID);
    expect(peer!.attributes).not.toHaveProperty(A.ATTR_ERROR_TYPE);
  });

  test("captured workspace commands carry their arguments (none when there are none); an exit code must be a number", async () => {
    const spans = await cellSpans({
      hostRequests: [
        hr({ requestId: "a", request: { params: { argv: ["ls", 3] } }, reply: { kind: "ok", value: { exit_code: "0" } } }),
        hr({ requestId: "b", request: { params: { argv: [] } }, reply: { kind: "ok", value: { exit_code: 2 } } }),
        hr({ requestId: "c", method: "peer.send", request: { params: { peer_id: "p", request_id: "q" } } }),
      ],
    }, true);
    const [ls, empty, peer] = spans;
    expect(ls!.name).toBe("workspace.run ls");
    expect(ls!.attributes[A.ATTR_PROCESS_COMMAND_ARGS]).toEqual(["ls", "3"]);
    expect(ls!.attributes).not.toHaveProperty(A.ATTR_PROCESS_EXIT_CODE);
    expect(empty!.attributes).not.toHaveProperty(A.ATTR_PROCESS_COMMAND_ARGS);
    expect(empty!.attributes[A.ATTR_PROCESS_EXIT_CODE]).toBe(2);
    expect(peer!.name).toBe("peer.send p");
    expect(peer!.attributes).toMatchObject({ [A.ATTR_KLBR_PEER_ID]: "p", [A.ATTR_KLBR_PEER_REQUEST_ID]: "q" });
  });

  test("close ends open cells at the given time, and only once", async () => {
    const spans = await record((r) => {
      r.cellStarted({ sessionId: "root", executionId: "ex_1", callId: null, atMs: T + 1000 });
      r.close(T + 3000);
      expect(r.tracks("ex_1")).toBe(false);
      r.close(T + 4000);
    });
    expect(spans).toHaveLength(1);
    expect(ms(spans[0]!, "endTime")).toBe(T + 3000);
  });
});

describe("exceptionType", () => {
  test("the class at the start of the last line, after trimming the text", () => {
    expect(exceptionType("ValueError: bad\n\n")).toBe("ValueError");
    expect(exceptionType("!!Foo: x")).toBe("error");
    expect(exceptionType("not a class name: x")).toBe("error");
  });
});
