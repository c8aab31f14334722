// C18 against a real Jaeger on loopback: a scripted session through the host, then the traces as
// Jaeger's query API returns them, compared with the host's own log.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { attributes as A } from "@klbr/telemetry";
import type { UsageRecord } from "@klbr/usage";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { freePort, startTestJaeger, tag, type JaegerSpan, type JaegerTrace } from "../../../test-support/jaeger.ts";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { executions, modelRequests } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

const { jaeger, skip } = await startTestJaeger();
if (skip) console.warn(skip);
afterAll(async () => {
  await jaeger?.stop();
});

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

async function drivenHost(env: NodeJS.ProcessEnv, warn?: (line: string) => void) {
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server!.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }),
  );
  const t = await startTestHost({ dataDir, drive: true, telemetry: { env, ...(warn ? { warn } : {}) } });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await t.close();
  };
  closers.push(close);
  return { ...t, close };
}

async function say(host: Host, text: string) {
  await host.postInput(text);
  await host.turns!.idle();
}

/** The spans of that name, in the order they started (Jaeger returns a trace's spans in no set order). */
const spansNamed = (trace: JaegerTrace, name: string) => trace.spans.filter((s) => s.operationName === name).sort((a, b) => a.startTime - b.startTime);
const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === "CHILD_OF")?.spanID;

describe.skipIf(!jaeger)("telemetry to a real Jaeger (C18)", () => {
  test("one trace per turn; chat and execute_tool under invoke_agent; attributes and cache tokens as the log has them; no contents by default", async () => {
    // The replies name a dated snapshot of the model asked for, as real routes do.
    server = await startScriptedServer({ responseModel: "scripted-1-2026-12-01" });
    server.push(
      // One 503 first: the client library retries, and the row (and the span) count it.
      { status: 503, body: "busy" },
      { text: "Sending a note.", calls: [{ code: "r = await runtime.send('hello operator')\nr['status']" }] },
      { text: "Running a command.", calls: [{ code: "o = await runtime.run(['echo', 'the-secret-output'])\no['exit_code']" }] },
      { text: "Done for now." },
      { text: "Second turn, one cell.", calls: [{ code: "1/0" }] },
      { text: "That failed; stopping." },
    );
    const { host, close } = await drivenHost({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger!.otlpHttp });
    expect(await host.status()).toMatchObject({ telemetry: { endpoint: `${jaeger!.otlpHttp}/v1/traces`, protocol: "http/protobuf", capture_content: false } });
    await say(host, "hi there");
    await say(host, "again");
    const requests = host.db.select().from(modelRequests).orderBy(modelRequests.startedAtMs, modelRequests.id).all();
    const cells = host.db.select().from(executions).all();
    const turnIds = [...new Set(requests.map((r) => r.turnId))];
    expect(turnIds).toHaveLength(2);
    expect(cells).toHaveLength(3);
    // Stopping the host flushes the batch: every span is in Jaeger after it.
    await close();

    const traces = (await jaeger!.waitForTraces("klbr", (ts) => ts.filter((t) => t.spans.some((s) => turnIds.includes(String(tag(s, A.ATTR_KLBR_TURN_ID))))).reduce((n, t) => n + t.spans.length, 0) >= 2 + 5 + 3 + 1)).filter((t) =>
      t.spans.some((s) => turnIds.includes(String(tag(s, A.ATTR_KLBR_TURN_ID)))),
    );
    expect(traces).toHaveLength(2);
    const byTurn = new Map(traces.map((t) => [String(tag(t.spans.find((s) => s.operationName === "invoke_agent root")!, A.ATTR_KLBR_TURN_ID)), t]));
    for (const [i, turnId] of turnIds.entries()) {
      const trace = byTurn.get(turnId)!;
      expect(trace.processes[trace.spans[0]!.processID]!.serviceName).toBe("klbr");
      const [root] = spansNamed(trace, "invoke_agent root");
      expect(root).toBeDefined();
      expect(root!.references).toEqual([]);
      expect(tag(root!, A.ATTR_GEN_AI_OPERATION_NAME)).toBe("invoke_agent");
      expect(tag(root!, A.ATTR_GEN_AI_CONVERSATION_ID)).toBe("root");
      expect(tag(root!, A.ATTR_KLBR_TURN_END_REASON)).toBe("model_ended_turn");
      const chats = spansNamed(trace, "chat scripted-1");
      const rows = requests.filter((r) => r.turnId === turnId);
      expect(chats).toHaveLength(rows.length);
      expect(chats).toHaveLength(i === 0 ? 3 : 2);
      for (const chat of chats) {
        expect(parentOf(chat)).toBe(root!.spanID);
        const row = rows.find((r) => r.id === tag(chat, A.ATTR_KLBR_MODEL_REQUEST_ID))!;
        const usage = row.usage as UsageRecord;
        expect(tag(chat, A.ATTR_GEN_AI_OPERATION_NAME)).toBe("chat");
        expect(tag(chat, A.ATTR_GEN_AI_PROVIDER_NAME)).toBe("openai");
        expect(tag(chat, A.ATTR_GEN_AI_REQUEST_MODEL)).toBe("scripted-1");
        expect(row.responseModel).toBe("scripted-1-2026-12-01");
        expect(tag(chat, A.ATTR_GEN_AI_RESPONSE_MODEL)).toBe(row.responseModel);
        expect(tag(chat, A.ATTR_GEN_AI_CONVERSATION_ID)).toBe("root");
        expect(tag(chat, A.ATTR_KLBR_HEADER_RECORD_ID)).toBe(row.headerRecordId);
        // Exactly the log's figures; what the route did not report is absent in Jaeger too.
        expect(tag(chat, A.ATTR_GEN_AI_USAGE_INPUT_TOKENS)).toBe(usage.prompt_tokens);
        expect(tag(chat, A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS)).toBe(usage.completion_tokens);
        expect(tag(chat, A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS)).toBe(usage.cached_prompt_tokens);
        expect(usage.cache_write_tokens).toBeUndefined();
        expect(tag(chat, A.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS)).toBeUndefined();
        expect(tag(chat, A.ATTR_HTTP_REQUEST_RESEND_COUNT)).toBe(row.retries > 0 ? row.retries : undefined);
        expect(chat.startTime).toBe(row.startedAtMs * 1000);
        expect(chat.duration).toBe((row.endedAtMs! - row.startedAtMs) * 1000);
      }
      expect(chats.some((c) => Number(tag(c, A.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS)) > 0)).toBe(true);
    }
    expect(requests[0]!.retries).toBe(1);
    const first = byTurn.get(turnIds[0]!)!;
    const tools = spansNamed(first, "execute_tool python");
    expect(tools).toHaveLength(2);
    const root = spansNamed(first, "invoke_agent root")[0]!;
    for (const tool of tools) {
      expect(parentOf(tool)).toBe(root.spanID);
      expect(tag(tool, A.ATTR_GEN_AI_TOOL_NAME)).toBe("python");
      expect(tag(tool, A.ATTR_GEN_AI_TOOL_CALL_ID)).toMatch(/\S/);
      expect(tag(tool, A.ATTR_KLBR_CELL_STATUS)).toBe("ok");
    }
    const send = tools.find((t) => t.logs.some((l) => l.fields.some((f) => f.key === "event" && f.value === "local.send")))!;
    expect(send).toBeDefined();
    const run = spansNamed(first, "workspace.run echo")[0]!;
    expect(run).toBeDefined();
    expect(parentOf(run)).not.toBe(send.spanID);
    expect(tools.map((t) => t.spanID)).toContain(parentOf(run));
    expect(tag(run, A.ATTR_PROCESS_EXIT_CODE)).toBe(0);
    const failed = spansNamed(byTurn.get(turnIds[1]!)!, "execute_tool python")[0]!;
    expect(tag(failed, A.ATTR_KLBR_CELL_STATUS)).toBe("error");
    expect(tag(failed, A.ATTR_ERROR_TYPE)).toBe("ZeroDivisionError");
    expect(tag(failed, "otel.status_code")).toBe("ERROR");
    // Content capture is off by default: no message, code or output anywhere in what Jaeger holds.
    const everything = JSON.stringify(traces);
    for (const secret of ["hello operator", "the-secret-output", "hi there", "Sending a note.", "1/0"]) expect(everything).not.toContain(secret);
    for (const key of [A.ATTR_GEN_AI_INPUT_MESSAGES, A.ATTR_GEN_AI_OUTPUT_MESSAGES, A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS, A.ATTR_GEN_AI_TOOL_CALL_RESULT, A.ATTR_PROCESS_COMMAND_ARGS]) {
      expect(everything).not.toContain(key);
    }
  });

  test("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true the inputs, replies, code and output are on the spans", async () => {
    server = await startScriptedServer();
    server.push({ text: "Computing.", calls: [{ code: "print('captured-output')" }] }, { text: "Done." });
    const { host, close } = await drivenHost({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger!.otlpHttp, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    await say(host, "capture-me please");
    const turnId = host.db.select().from(modelRequests).all()[0]!.turnId;
    await close();
    const [trace] = (await jaeger!.waitForTraces("klbr", (ts) => ts.some((t) => t.spans.length >= 4 && t.spans.some((s) => tag(s, A.ATTR_KLBR_TURN_ID) === turnId)))).filter((t) => t.spans.some((s) => tag(s, A.ATTR_KLBR_TURN_ID) === turnId));
    const chat = spansNamed(trace!, "chat scripted-1")[0]!;
    expect(String(tag(chat, A.ATTR_GEN_AI_INPUT_MESSAGES))).toContain("capture-me please");
    expect(JSON.parse(String(tag(chat, A.ATTR_GEN_AI_OUTPUT_MESSAGES)))[0]).toMatchObject({ role: "assistant", parts: [{ type: "text", content: "Computing." }, { type: "tool_call" }] });
    const tool = spansNamed(trace!, "execute_tool python")[0]!;
    expect(JSON.parse(String(tag(tool, A.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS)))).toEqual({ code: "print('captured-output')" });
    expect(String(tag(tool, A.ATTR_GEN_AI_TOOL_CALL_RESULT))).toContain("captured-output");
  });

  test("a collector that is down: the session runs as ever, the spans are counted as dropped, one warning line", async () => {
    server = await startScriptedServer();
    const steps = 6;
    for (let i = 0; i < steps; i++) server.push({ text: `step ${i}`, calls: [{ code: `x = ${i}\nx` }] });
    server.push({ text: "done" });
    const port = await freePort();
    const warnings: string[] = [];
    const { host, close } = await drivenHost({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_TIMEOUT: "300", OTEL_BSP_SCHEDULE_DELAY: "20" }, (l) => warnings.push(l));
    await say(host, "go");
    const cells = host.db.select().from(executions).all();
    expect(cells.map((c) => c.status)).toEqual(Array(steps).fill("ok"));
    // 1 turn + 7 requests + 6 cells: each span is exported, fails, and is counted.
    const spans = 1 + (steps + 1) + steps;
    expect(((await host.status()) as { telemetry: unknown }).telemetry).toMatchObject({ exported: 0 });
    // The counts outlive the host (its log is closed after stop): read them from its telemetry.
    const telemetry = host.telemetry!;
    await close();
    const deadline = Date.now() + 60_000;
    while (telemetry.status().pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(telemetry.status()).toMatchObject({ exported: 0, dropped: spans, pending: 0 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`klbr: telemetry: spans to http://127.0.0.1:${port}/v1/traces are being dropped`);
  });
});
