/** The OTLP wire protocols the OpenTelemetry SDK knows for traces. */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;

/** One of OTLP_PROTOCOLS. */
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** What the environment asks of trace export (C18); the SDK reads the rest of OTEL_* itself. */
export interface TelemetryConfig {
  /** Where spans go, as the exporter will send them (for `klbr serve` to print). */
  readonly endpoint: string;
  readonly protocol: OtlpProtocol;
  /** The protocol variable's value when it named none of OTLP_PROTOCOLS (the SDK's default is used then). */
  readonly unknownProtocol: string | null;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: message contents go on spans. */
  readonly captureContent: boolean;
  /** OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT, when set: how long one export may take, retries included. */
  readonly timeoutMs?: number;
  /** OTEL_BSP_* as set: the batch processor's delay, queue and batch sizes, and export timeout. */
  readonly batch: BatchSettings;
}

/** The batch span processor's settings, as the OTEL_BSP_* variables give them (absent: the SDK's default). */
export interface BatchSettings {
  scheduledDelayMillis?: number;
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  exportTimeoutMillis?: number;
}

const BSP_VARIABLES = {
  scheduledDelayMillis: "OTEL_BSP_SCHEDULE_DELAY",
  maxQueueSize: "OTEL_BSP_MAX_QUEUE_SIZE",
  maxExportBatchSize: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
  exportTimeoutMillis: "OTEL_BSP_EXPORT_TIMEOUT",
} as const;

/** A non-negative number variable, or undefined when unset or not a number (the SDK ignores those too). */
function numberOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The service name spans carry unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise. */
export const DEFAULT_SERVICE_NAME = "klbr";

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";

/**
 * Read the standard variables (endpoint, protocol, timeout, batch settings, content capture) from
 * `env`; headers, compression, sampler and resource attributes the SDK reads from the process's
 * environment itself. A host passes its own environment, so the two are the same there.
 * Null (export off) unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, or when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
 * (both mean "no traces" to every OpenTelemetry SDK).
 */
export function telemetryConfig(env: NodeJS.ProcessEnv = process.env): TelemetryConfig | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!set(traces) && !set(base)) return null;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return null;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return null;
  const asked = (set(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL : env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  const known = (OTLP_PROTOCOLS as readonly string[]).includes(asked ?? "");
  const protocol: OtlpProtocol = known ? (asked as OtlpProtocol) : "http/protobuf";
  const batch: BatchSettings = {};
  for (const [key, name] of Object.entries(BSP_VARIABLES)) {
    const n = numberOf(env[name]);
    if (n !== undefined) batch[key as keyof BatchSettings] = n;
  }
  const timeoutMs = numberOf(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT) ?? numberOf(env.OTEL_EXPORTER_OTLP_TIMEOUT);
  return {
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    batch,
    endpoint: endpointOf(protocol, set(traces) ? traces.trim() : null, set(base) ? base.trim() : null),
    protocol,
    unknownProtocol: set(asked) && !known ? asked : null,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
  };
}

/**
 * The URL the exporter sends to, by the OTLP exporter rules: a signal endpoint is used as given;
 * the base endpoint gets `/v1/traces` appended for HTTP; gRPC takes either as given.
 */
export function endpointOf(protocol: OtlpProtocol, traces: string | null, base: string | null): string {
  if (traces !== null) return traces;
  if (base === null) throw new Error("no OTLP endpoint");
  if (protocol === "grpc") return base;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}
