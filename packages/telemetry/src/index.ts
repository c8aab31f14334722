// @klbr/telemetry: OpenTelemetry traces of klbr turns, model requests and cells (C18).

// Configuration from the standard OTEL_* variables
export { DEFAULT_SERVICE_NAME, endpointOf, OTLP_PROTOCOLS, telemetryConfig } from "./config";
export type { OtlpProtocol, TelemetryConfig } from "./config";

// Export: the SDK's batch processor and OTLP exporter, counted
export { AdmittingProcessor, CountingExporter, ExportLedger } from "./counts";
export type { ExportCounts } from "./counts";
export { startExport } from "./pipeline";
export type { ExportOptions, ExportPipeline } from "./pipeline";
/** The SDK's exporter and finished-span types (an embedder's own exporter implements SpanExporter). */
export type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";

// Spans from the log's records
export { exceptionType, providerOf, SpanRecorder } from "./recorder";
export type { CellRecord, CellStart, HostRequestRecord, ModelRequestRecord, TurnEnd, TurnStart } from "./records";
export * as attributes from "./attributes";

// The host's handle
export { Telemetry } from "./telemetry";
export type { TelemetryStatus } from "./telemetry";
