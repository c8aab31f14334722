// C18 spans through a real host, read from an exporter of our own (no collector needed): the
// parent links within a turn, and the links between a peer's turn and the cell that caused it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { attributes as A, type ReadableSpan, type SpanExporter } from "@klbr/telemetry";
import { afterEach, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer, type ScriptedServerOptions } from "../../../test-support/scripted-server.ts";
import { executions, modelRequests, peers as peersTable } from "../src/db/schema";
import { readLog } from "../src/store/log-view";
import { startTestHost, tempDir } from "./helpers";

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

/** Keeps every span it is given. */
function memoryExporter(): SpanExporter & { spans: ReadableSpan[] } {
  const spans: ReadableSpan[] = [];
  return {
    spans,
    export(batch, done) {
      spans.push(...batch);
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
}

async function drivenHost(exporter: SpanExporter, api: "chat" | "responses" | "anthropic" = "chat", serverOptions: ScriptedServerOptions = {}) {
  server = await startScriptedServer(serverOptions);
  const dataDir = tempDir();
  const base_url = api === "anthropic" ? server.url : `${server.url}/v1`;
  writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api, base_url, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }));
  const t = await startTestHost({ dataDir, drive: true, telemetry: { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, exporter } });
  closers.push(t.close);
  return t;
}

const id = (s: ReadableSpan) => s.spanContext().spanId;

describe("telemetry spans of a driven host (C18)", () => {
  test("a peer's turn links to the cell that sent its request; the opener's next turn to the cell that answered", async () => {
    const exporter = memoryExporter();
    const { host, close } = await drivenHost(exporter);
    server!.push(
      { calls: [{ code: "p = await runtime.peer_open('independent')\nawait runtime.peer_send(p['peer_id'], 'q1', 'compute 6*7')\nawait runtime.wait(None, 'for the peer')" }] },
      { calls: [{ code: "await runtime.peer_submit_result('q1', {'answer': 6*7})" }] },
      { text: "done" },
      { text: "done" },
    );
    await host.postInput("please delegate");
    await host.turns!.idle();
    const [peer] = host.db.select().from(peersTable).all();
    const cells = host.db.select().from(executions).all();
    await close();

    const spans = exporter.spans;
    const turns = spans.filter((s) => s.name.startsWith("invoke_agent "));
    const rootTurns = turns.filter((s) => s.name === "invoke_agent root");
    const peerTurns = turns.filter((s) => s.name === `invoke_agent ${peer!.sessionId}`);
    expect(rootTurns.length).toBe(2);
    expect(peerTurns.length).toBeGreaterThanOrEqual(1);
    const cellSpan = (executionId: string) => spans.find((s) => s.name === "execute_tool python" && s.attributes[A.ATTR_KLBR_EXECUTION_ID] === executionId)!;
    const sender = cellSpan(cells.find((c) => c.sessionId === "root")!.id);
    const answerer = cellSpan(cells.find((c) => c.sessionId === peer!.sessionId)!.id);
    // Each span's parent is the root span of its own turn's trace.
    for (const s of spans.filter((x) => !x.name.startsWith("invoke_agent "))) {
      const turn = turns.find((t) => t.spanContext().traceId === s.spanContext().traceId)!;
      expect(turn).toBeDefined();
      if (s.name.startsWith("chat ") || s.name === "execute_tool python") expect(s.parentSpanContext?.spanId).toBe(id(turn));
    }
    expect(peerTurns[0]!.links.map((l) => l.context.spanId)).toEqual([id(sender)]);
    expect(rootTurns[1]!.links.map((l) => l.context.spanId)).toEqual([id(answerer)]);
    // The request itself: an event on the sender's cell and a child span named for the peer.
    expect(sender.events.map((e) => e.name)).toContain("peer.send");
    const send = spans.find((s) => s.name === `peer.send ${peer!.id}`)!;
    expect(send.parentSpanContext?.spanId).toBe(id(sender));
    expect(send.attributes).toMatchObject({ [A.ATTR_KLBR_PEER_ID]: peer!.id, [A.ATTR_KLBR_PEER_REQUEST_ID]: "q1" });
    expect(rootTurns.map((t) => t.attributes[A.ATTR_KLBR_TURN_END_REASON])).toEqual(["yielded", "model_ended_turn"]);
  }, 120_000);

  // Issue 38 (4): the reply names the model that answered (often a dated snapshot of the one asked
  // for); the row keeps it, the span exports it as gen_ai.response.model, `klbr log` shows it.
  test.each(["chat", "responses", "anthropic"] as const)("%s: the model the reply named is on the row, the chat span and the log; absent when it names none", async (api) => {
    const exporter = memoryExporter();
    const { host, close } = await drivenHost(exporter, api, { responseModel: "scripted-1-2026-12-01" });
    server!.push({ text: "one cell", calls: [{ code: "1 + 1" }] }, { text: "done" });
    await host.postInput("hi");
    await host.turns!.idle();
    const rows = host.db.select().from(modelRequests).orderBy(modelRequests.startedAtMs, modelRequests.id).all();
    expect(rows.map((r) => [r.model, r.responseModel])).toEqual([
      ["scripted-1", "scripted-1-2026-12-01"],
      ["scripted-1", "scripted-1-2026-12-01"],
    ]);
    const logged = readLog(host.sqlite).filter((e) => e.kind === "model.request");
    expect(logged.map((e) => [e.id, e.response_model])).toEqual(rows.map((r) => [r.id, "scripted-1-2026-12-01"]));
    await close();
    const chats = exporter.spans.filter((s) => s.name === "chat scripted-1");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.attributes[A.ATTR_GEN_AI_REQUEST_MODEL]).toBe("scripted-1");
      expect(chat.attributes[A.ATTR_GEN_AI_RESPONSE_MODEL]).toBe("scripted-1-2026-12-01");
    }

    // A reply that names no model: null on the row and in the log, no attribute on the span.
    await server!.close();
    const quiet = memoryExporter();
    const again = await drivenHost(quiet, api, { responseModel: null });
    server!.push({ text: "done" });
    await again.host.postInput("hi");
    await again.host.turns!.idle();
    const [row] = again.host.db.select().from(modelRequests).all();
    expect(row).toMatchObject({ status: "ok", responseModel: null });
    expect(readLog(again.host.sqlite).find((e) => e.kind === "model.request")).toMatchObject({ response_model: null });
    await again.close();
    const [chat] = quiet.spans.filter((s) => s.name === "chat scripted-1");
    expect(chat).toBeDefined();
    expect(A.ATTR_GEN_AI_RESPONSE_MODEL in chat!.attributes).toBe(false);
  }, 60_000);
});
