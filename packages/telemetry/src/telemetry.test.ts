import { createServer } from "node:net";
import { InMemorySpanExporter as SdkMemoryExporter } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, test } from "vitest";
import { Telemetry } from "./telemetry";

/** The SDK's in-memory exporter, except that shutdown keeps what it holds (the SDK's clears it). */
class InMemorySpanExporter extends SdkMemoryExporter {
  override shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A loopback port nothing listens on (bound, then released). */
function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("Telemetry (the host's handle)", () => {
  test("off without an endpoint", () => {
    expect(Telemetry.start({})).toBeNull();
  });

  test("deferred work runs on a later turn of the event loop, never inside the caller; a throwing piece is counted, not thrown", async () => {
    const memory = new InMemorySpanExporter();
    const t = Telemetry.start({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, { exporter: memory, warn: () => {} })!;
    closers.push(() => t.close(Date.now()));
    const ran: string[] = [];
    t.defer((r) => {
      ran.push("turn");
      r.turnStarted({ sessionId: "root", turnId: "turn_1", atMs: 1000 });
    });
    t.defer(() => {
      throw new Error("a row that vanished");
    });
    t.defer((r) => r.turnEnded({ sessionId: "root", reason: "yielded", atMs: 2000 }));
    expect(ran).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(ran).toEqual(["turn"]);
    await t.close(3000);
    expect(memory.getFinishedSpans().map((s) => s.name)).toEqual(["invoke_agent root"]);
    expect(t.status()).toMatchObject({ exported: 1, dropped: 1, pending: 0 });
  });

  test("describe says where traces go", () => {
    const t = Telemetry.start({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }, { exporter: new InMemorySpanExporter() })!;
    closers.push(() => t.close(Date.now()));
    expect(t.describe()).toBe("traces to http://collector:4318/v1/traces (OTLP http/protobuf, message contents captured)");
  });

  for (const protocol of ["http/protobuf", "http/json", "grpc"]) {
    test(`a collector that is down (${protocol}): spans dropped and counted, one warning line, nothing thrown, close bounded`, async () => {
      const port = await deadPort();
      const warnings: string[] = [];
      // A short export timeout and batch delay keep the test quick.
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_EXPORTER_OTLP_TIMEOUT: "500", OTEL_BSP_SCHEDULE_DELAY: "20" };
      const t = Telemetry.start(env, { warn: (l) => warnings.push(l) })!;
      for (let i = 0; i < 5; i++) {
        t.defer((r) => {
          r.turnStarted({ sessionId: `s${i}`, turnId: `turn_${i}`, atMs: Date.now() });
          r.turnEnded({ sessionId: `s${i}`, reason: "model_ended_turn", atMs: Date.now() });
        });
      }
      await until(() => t.status().dropped === 5, "5 dropped spans");
      expect(t.status()).toMatchObject({ exported: 0, dropped: 5, pending: 0 });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`^klbr: telemetry: spans to http://127\\.0\\.0\\.1:${port}\\S* are being dropped \\(.+\\); the host goes on`));
      await t.close(Date.now(), 1000);
    });
  }
});
