// A real Jaeger v2 (all-in-one: OTLP receiver, in-memory storage, query API) on 127.0.0.1 for the
// telemetry tests and benchmark. The binary is built once by .ci/setup-jaeger.sh (KLBR_TEST_JAEGER
// names it; the cache path is the default). Every port comes from a config file of our own, each
// a free one, so two runs never collide and nothing binds Jaeger's defaults (4317, 4318, 8888,
// 16686); stop waits until the process is gone and every one of its ports can be bound again.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** The binary .ci/setup-jaeger.sh builds, unless KLBR_TEST_JAEGER names another. */
export const JAEGER_BINARY = process.env.KLBR_TEST_JAEGER || join(homedir(), ".cache", "klbr-ci", "jaeger", "jaeger-v1.76.0");

/** One span as Jaeger's query API returns it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: "CHILD_OF" | "FOLLOWS_FROM"; traceID: string; spanID: string }>;
  /** Microseconds since the epoch. */
  startTime: number;
  duration: number;
  tags: Array<{ key: string; type: string; value: unknown }>;
  logs: Array<{ timestamp: number; fields: Array<{ key: string; type: string; value: unknown }> }>;
  processID: string;
}

/** One trace as Jaeger's query API returns it. */
export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: Array<{ key: string; value: unknown }> }>;
}

/** A running Jaeger. */
export interface TestJaeger {
  /** OTLP/HTTP base endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`): `http://127.0.0.1:<port>`. */
  readonly otlpHttp: string;
  /** OTLP/gRPC endpoint: `http://127.0.0.1:<port>`. */
  readonly otlpGrpc: string;
  /** The query API and UI: `http://127.0.0.1:<port>`. */
  readonly query: string;
  readonly pid: number;
  /** Traces of a service (the query API's `/api/traces?service=`). */
  traces(service: string): Promise<JaegerTrace[]>;
  /** Poll the query API until `done` holds for the service's traces (Jaeger stores spans a batch at a time). */
  waitForTraces(service: string, done: (traces: JaegerTrace[]) => boolean, timeoutMs?: number): Promise<JaegerTrace[]>;
  /** SIGTERM, then wait for exit and for every port to be free again. */
  stop(): Promise<void>;
}

/** A tag's value by key, or undefined. */
export function tag(span: JaegerSpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}

/** A free TCP port on 127.0.0.1 (bound then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function config(ports: Record<"grpc" | "http" | "query" | "queryGrpc" | "health", number>): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${ports.health}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.grpc}
      http:
        endpoint: 127.0.0.1:${ports.http}
processors:
  batch:
    timeout: 50ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

/** Why Jaeger cannot run here, or null when its binary is there. */
export function jaegerMissing(): string | null {
  return existsSync(JAEGER_BINARY) ? null : `no Jaeger binary at ${JAEGER_BINARY}: run .ci/setup-jaeger.sh (or set KLBR_TEST_JAEGER)`;
}

/**
 * Start Jaeger where its binary is built. Where it is not, the tests that need it are skipped
 * with the reason (`skip`), except in CI (`CI` set), where that is a failure: .ci/run builds it.
 */
export async function startTestJaeger(): Promise<{ jaeger: TestJaeger; skip: null } | { jaeger: null; skip: string }> {
  const missing = jaegerMissing();
  if (missing) {
    if (process.env.CI) throw new Error(`CI: Jaeger must run for the telemetry tests: ${missing}`);
    return { jaeger: null, skip: `${missing}; telemetry tests skipped` };
  }
  return { jaeger: await startJaeger(), skip: null };
}

/** Start Jaeger on free loopback ports and wait until it is healthy and its OTLP port listens. */
export async function startJaeger(): Promise<TestJaeger> {
  const ports = { grpc: await freePort(), http: await freePort(), query: await freePort(), queryGrpc: await freePort(), health: await freePort() };
  const dir = mkdtempSync(join(tmpdir(), "klbr-jaeger-"));
  const file = join(dir, "config.yaml");
  writeFileSync(file, config(ports));
  const child = spawn(JAEGER_BINARY, ["--config", file], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, OTEL_SDK_DISABLED: "true" } });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-8000);
  });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<void>((resolve) => child.once("exit", (code, signal) => ((exited = { code, signal }), resolve())));
  const query = `http://127.0.0.1:${ports.query}`;
  const stop = async () => {
    if (!exited) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exit;
      clearTimeout(killer);
    }
    // Jaeger's listeners linger a moment after it exits: the next start (or another run) needs them.
    for (const port of Object.values(ports)) {
      for (let i = 0; !(await portFree(port)); i++) {
        if (i > 200) throw new Error(`port ${port} still busy 10 s after Jaeger exited`);
        await pause(50);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitHealthy(`http://127.0.0.1:${ports.health}/status`, child, () => exited, () => log);
    await waitHealthy(`${query}/api/services`, child, () => exited, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  const traces = async (service: string): Promise<JaegerTrace[]> => {
    const res = await fetch(`${query}/api/traces?service=${encodeURIComponent(service)}&limit=1000&lookback=2d`);
    if (res.status === 404) return [];
    if (!res.ok) throw new Error(`jaeger /api/traces: HTTP ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { data: JaegerTrace[] | null }).data ?? [];
  };
  return {
    otlpHttp: `http://127.0.0.1:${ports.http}`,
    otlpGrpc: `http://127.0.0.1:${ports.grpc}`,
    query,
    pid: child.pid!,
    traces,
    async waitForTraces(service, done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = await traces(service);
        if (done(found)) return found;
        if (Date.now() > deadline) throw new Error(`jaeger: traces of ${service} not as expected after ${timeoutMs} ms: ${JSON.stringify(found.map((t) => t.spans.map((s) => s.operationName)))}`);
        await pause(100);
      }
    },
    stop,
  };
}

async function waitHealthy(url: string, child: ChildProcess, exited: () => unknown, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited()) throw new Error(`jaeger exited before it was ready: ${log().trim()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`jaeger not ready at ${url} after 60 s: ${log().trim()}`);
    }
    await pause(50);
  }
}
