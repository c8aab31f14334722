import type { Tracer } from "@opentelemetry/api";
import { getNumberFromEnv } from "@opentelemetry/core";
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "./attributes";
import { DEFAULT_SERVICE_NAME, type TelemetryConfig } from "./config";
import { AdmittingProcessor, CountingExporter, ExportLedger, type ExportCounts } from "./counts";

/** The SDK's default queue size (OTEL_BSP_MAX_QUEUE_SIZE). */
const DEFAULT_MAX_QUEUE_SIZE = 2048;

/** A running trace export: the tracer spans are made with, its counts, and a bounded stop. */
export interface ExportPipeline {
  readonly tracer: Tracer;
  counts(): ExportCounts;
  /** Flush what is queued and stop, giving up after `timeoutMs` (a collector that is down never holds the host). */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** Options of startExport. */
export interface ExportOptions {
  /** Where the one warning line goes (default: stderr). */
  warn?: (line: string) => void;
  /** An exporter to use instead of the OTLP one the protocol names (tests of the counting). */
  exporter?: SpanExporter;
  /** The instrumentation scope's version. */
  version?: string;
}

/**
 * Start exporting: a tracer provider of our own (never the global one, so a program embedding the
 * host keeps its own telemetry) with the OTLP exporter the protocol names, behind the SDK's batch
 * processor. Endpoint, headers, timeout, compression, sampler, batch sizes and resource attributes
 * are read by the SDK from the standard OTEL_* variables.
 */
export function startExport(config: TelemetryConfig, options: ExportOptions = {}): ExportPipeline {
  const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
  const capacity = config.batch.maxQueueSize ?? getNumberFromEnv("OTEL_BSP_MAX_QUEUE_SIZE") ?? DEFAULT_MAX_QUEUE_SIZE;
  const ledger = new ExportLedger(capacity, (reason) =>
    warn(`klbr: telemetry: spans to ${config.endpoint} are being dropped (${reason}); the host goes on, \`klbr status\` counts them`),
  );
  if (config.unknownProtocol !== null) warn(`klbr: telemetry: unknown OTLP protocol ${JSON.stringify(config.unknownProtocol)}, using ${config.protocol}`);
  const exporter = new CountingExporter(options.exporter ?? otlpExporter(config), ledger);
  const processor = new AdmittingProcessor(new BatchSpanProcessor(exporter, { ...config.batch }), ledger);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  let stopping: Promise<void> | null = null;
  return {
    tracer: provider.getTracer("@klbr/telemetry", options.version),
    counts: () => ledger.counts(),
    shutdown(timeoutMs = 2000) {
      stopping ??= provider.shutdown().catch(() => undefined);
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      return Promise.race([stopping, limit]).finally(() => clearTimeout(timer));
    },
  };
}

/**
 * The SDK's OTLP trace exporter for a protocol. The URL is the one the config resolved (by the
 * SDK's own rules) from the environment it was given; headers, timeout and compression the
 * exporter reads from OTEL_EXPORTER_OTLP_* itself.
 */
function otlpExporter(config: TelemetryConfig): SpanExporter {
  const options = { url: config.endpoint, ...(config.timeoutMs !== undefined ? { timeoutMillis: config.timeoutMs } : {}) };
  if (config.protocol === "grpc") return new GrpcExporter(options);
  if (config.protocol === "http/json") return new JsonExporter(options);
  return new ProtobufExporter(options);
}
