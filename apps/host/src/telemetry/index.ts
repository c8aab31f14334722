import { Telemetry, type SpanExporter, type TelemetryStatus } from "@klbr/telemetry";
import type { Notification } from "../requests/context";
import { hostVersion } from "../version";
import { TelemetryObserver, type TelemetryHost } from "./observer";

export { TelemetryObserver, type TelemetryHost } from "./observer";

/** A host's telemetry: spans from its notifications, and a bounded close. */
export interface HostTelemetry {
  /** One line for `klbr serve`: where traces go. */
  describe(): string;
  /** `klbr status`: endpoint, spans exported and dropped. */
  status(): TelemetryStatus;
  /** Build what is waiting, end open spans, flush within a bound, stop. */
  close(nowMs: number): Promise<void>;
}

/** Where telemetry reads its settings, and where its one warning goes (tests give their own). */
export interface HostTelemetryOptions {
  /** Default: the host's environment. */
  env?: NodeJS.ProcessEnv;
  /** Default: stderr. */
  warn?: (line: string) => void;
  /** An exporter instead of the OTLP one the environment names (tests that read spans in memory). */
  exporter?: SpanExporter;
}

/**
 * Start trace export when the environment asks for it (C18: OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and follow the host's notifications; null when off.
 */
export function startHostTelemetry(host: TelemetryHost & { subscribe(listener: (n: Notification) => void): () => void }, options: HostTelemetryOptions = {}): HostTelemetry | null {
  const telemetry = Telemetry.start(options.env ?? process.env, { version: hostVersion(), ...(options.warn ? { warn: options.warn } : {}), ...(options.exporter ? { exporter: options.exporter } : {}) });
  if (!telemetry) return null;
  const observer = new TelemetryObserver(host, telemetry);
  const unsubscribe = host.subscribe((n) => observer.follow(n));
  return {
    describe: () => telemetry.describe(),
    status: () => telemetry.status(),
    async close(nowMs) {
      unsubscribe();
      // What is waiting reads the log (before it closes), then its spans are built by close.
      telemetry.drain();
      await observer.settled();
      await telemetry.close(nowMs);
    },
  };
}
