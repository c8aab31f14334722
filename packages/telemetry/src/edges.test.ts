import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { InMemorySpanExporter as SdkMemoryExporter, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { describe, expect, test } from "vitest";
import * as A from "./attributes";
import { endpointOf, telemetryConfig } from "./config";
import { CountingExporter, ExportLedger } from "./counts";
import { startExport } from "./pipeline";
import { Telemetry } from "./telemetry";

/** The SDK's in-memory exporter, except that shutdown keeps what it holds (the SDK's clears it). */
class InMemorySpanExporter extends SdkMemoryExporter {
  override shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

// Edges of the ledger, the config and the handle the mutation run found untested (issue 38).

describe("ExportLedger and CountingExporter", () => {
  test("failed spans leave the queue: room comes back after a failure as after a success", () => {
    const ledger = new ExportLedger(2, () => {});
    ledger.admit();
    ledger.admit();
    ledger.settled(2, { code: ExportResultCode.FAILED });
    expect([ledger.admit(), ledger.admit(), ledger.admit()]).toEqual([true, true, false]);
    expect(ledger.counts()).toEqual({ exported: 0, dropped: 3, pending: 2 });
  });

  test("a failure without an error says the collector refused them", () => {
    const warnings: string[] = [];
    const ledger = new ExportLedger(1, (w) => warnings.push(w));
    ledger.settled(1, { code: ExportResultCode.FAILED });
    expect(warnings).toEqual(["the collector refused them"]);
  });

  test("an exporter that throws, or calls back twice, is counted once; flush and shutdown reach the inner one", async () => {
    const calls: string[] = [];
    const results: ExportResult[] = [];
    const inner: SpanExporter = {
      export(spans, done) {
        if (spans.length === 1) throw new Error("serialize");
        done({ code: ExportResultCode.SUCCESS });
        done({ code: ExportResultCode.FAILED });
      },
      shutdown: async () => void calls.push("shutdown"),
      forceFlush: async () => void calls.push("flush"),
    };
    const ledger = new ExportLedger(10, () => {});
    for (let i = 0; i < 3; i++) ledger.admit();
    const exporter = new CountingExporter(inner, ledger);
    exporter.export([{} as ReadableSpan], (r) => results.push(r));
    exporter.export([{} as ReadableSpan, {} as ReadableSpan], (r) => results.push(r));
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.FAILED, ExportResultCode.SUCCESS]);
    expect(results[0]!.error?.message).toBe("serialize");
    expect(ledger.counts()).toEqual({ exported: 2, dropped: 1, pending: 0 });
    await exporter.forceFlush();
    await exporter.shutdown();
    expect(calls).toEqual(["flush", "shutdown"]);
    // An exporter without forceFlush: flushing is a resolved no-op.
    await expect(new CountingExporter({ export: () => {}, shutdown: async () => {} }, ledger).forceFlush()).resolves.toBeUndefined();
  });
});

describe("startExport", () => {
  test("an unknown protocol is said once, naming the one used; the queue's size comes from the config", async () => {
    const warnings: string[] = [];
    const memory = new InMemorySpanExporter();
    const p = startExport({ endpoint: "http://a/v1/traces", protocol: "http/protobuf", unknownProtocol: "pigeon", captureContent: false, batch: { maxQueueSize: 1, scheduledDelayMillis: 60_000 } }, { exporter: memory, warn: (w) => warnings.push(w) });
    for (let i = 0; i < 3; i++) p.tracer.startSpan(`s${i}`).end();
    expect(p.counts()).toEqual({ exported: 0, dropped: 2, pending: 1 });
    expect(warnings).toEqual([
      'klbr: telemetry: unknown OTLP protocol "pigeon", using http/protobuf',
      "klbr: telemetry: spans to http://a/v1/traces are being dropped (the export queue is full); the host goes on, `klbr status` counts them",
    ]);
    await p.shutdown(1000);
  });

  test("a shutdown that cannot finish gives up at its bound; a second shutdown shares the first", async () => {
    const hung: SpanExporter = { export: () => {}, shutdown: () => new Promise(() => {}) };
    const p = startExport({ endpoint: "http://a", protocol: "http/protobuf", unknownProtocol: null, captureContent: false, batch: {} }, { exporter: hung, warn: () => {} });
    p.tracer.startSpan("s").end();
    await expect(p.shutdown(20)).resolves.toBeUndefined();
    await expect(p.shutdown(20)).resolves.toBeUndefined();
    expect(p.counts().pending).toBe(1);
  });
});

describe("telemetryConfig edges", () => {
  const base = { OTEL_EXPORTER_OTLP_ENDPOINT: " http://a:4318// " };
  test("values are trimmed: endpoint, protocol; every trailing slash goes before /v1/traces", () => {
    expect(telemetryConfig(base)!.endpoint).toBe("http://a:4318/v1/traces");
    expect(telemetryConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: " http://b/x " })!.endpoint).toBe("http://b/x");
    expect(telemetryConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: " grpc ", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toMatchObject({ protocol: "grpc", unknownProtocol: null, endpoint: "http://a:4318//" });
    expect(telemetryConfig({ ...base, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: " ", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })!.protocol).toBe("http/json");
    expect(telemetryConfig({ ...base, OTEL_SDK_DISABLED: " TRUE " })).toBeNull();
    expect(telemetryConfig({ ...base, OTEL_TRACES_EXPORTER: " None " })).toBeNull();
    expect(endpointOf("grpc", null, "http://g")).toBe("http://g");
  });

  test("numbers: zero is kept; blank, negative and infinite are ignored", () => {
    const batch = (v: string) => telemetryConfig({ ...base, OTEL_BSP_SCHEDULE_DELAY: v })!.batch;
    expect(batch("0")).toEqual({ scheduledDelayMillis: 0 });
    expect(batch(" 5 ")).toEqual({ scheduledDelayMillis: 5 });
    for (const v of [" ", "", "-1", "Infinity"]) expect(batch(v)).toEqual({});
    expect(telemetryConfig({ ...base, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "7", OTEL_BSP_EXPORT_TIMEOUT: "9" })!.batch).toEqual({ maxExportBatchSize: 7, exportTimeoutMillis: 9 });
  });
});

describe("Telemetry", () => {
  const start = () => Telemetry.start({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, { exporter: new InMemorySpanExporter(), warn: () => {} })!;

  test("describe without capture names no contents", async () => {
    const t = start();
    expect(t.describe()).toBe("traces to http://127.0.0.1:1/v1/traces (OTLP http/protobuf)");
    await t.close(0);
  });

  test("work past 4096 waiting is dropped and counted; one drain runs the rest; a closed handle takes nothing", async () => {
    const t = start();
    let ran = 0;
    for (let i = 0; i < 4100; i++) t.defer(() => void ran++);
    expect(t.status().dropped).toBe(4);
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(4096);
    // After a drain a new piece is scheduled again.
    t.defer(() => void ran++);
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(4097);
    await t.close(0);
    t.defer(() => void ran++);
    t.drain();
    await t.close(0);
    expect(ran).toBe(4097);
    expect(t.status()).toMatchObject({ endpoint: "http://127.0.0.1:1/v1/traces", protocol: "http/protobuf", capture_content: false, dropped: 4 });
  });

  test("close builds what is waiting before it ends open spans", async () => {
    const memory = new InMemorySpanExporter();
    const t = Telemetry.start({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, { exporter: memory, warn: () => {} })!;
    t.defer((r) => r.turnStarted({ sessionId: "s", turnId: "t", atMs: 1 }));
    await t.close(5);
    expect(memory.getFinishedSpans().map((s) => `${s.name} ${s.attributes[A.ATTR_KLBR_TURN_END_REASON]}`)).toEqual(["invoke_agent s host_stopped"]);
  });
});

describe("klbr attribute names (what a trace query filters on)", () => {
  test("are the documented strings", () => {
    expect([A.ATTR_KLBR_TURN_ID, A.ATTR_KLBR_TURN_END_REASON, A.ATTR_KLBR_ROUTE, A.ATTR_KLBR_MODEL_REQUEST_ID, A.ATTR_KLBR_HEADER_RECORD_ID, A.ATTR_KLBR_REQUEST_BODY_BYTES, A.ATTR_KLBR_REQUEST_SHARED_PREFIX_BYTES, A.ATTR_KLBR_EXECUTION_ID, A.ATTR_KLBR_CELL_STATUS, A.ATTR_KLBR_CELL_ENDED_BY, A.ATTR_KLBR_CELL_TRUNCATED_BYTES, A.ATTR_KLBR_HOST_REQUEST_ID, A.ATTR_KLBR_HOST_REQUEST_STATUS, A.ATTR_KLBR_HOST_REQUEST_DURATION_MS, A.ATTR_KLBR_PEER_ID, A.ATTR_KLBR_PEER_REQUEST_ID]).toEqual([
      "klbr.turn.id", "klbr.turn.end_reason", "klbr.route", "klbr.model_request.id", "klbr.header.record_id", "klbr.request.body_bytes", "klbr.request.shared_prefix_bytes", "klbr.execution.id", "klbr.cell.status", "klbr.cell.ended_by", "klbr.cell.truncated_bytes", "klbr.host_request.id", "klbr.host_request.status", "klbr.host_request.duration_ms", "klbr.peer.id", "klbr.peer.request_id",
    ]);
  });
});
