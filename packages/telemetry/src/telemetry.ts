import { telemetryConfig, type TelemetryConfig } from "./config";
import type { ExportCounts } from "./counts";
import { startExport, type ExportOptions, type ExportPipeline } from "./pipeline";
import { SpanRecorder } from "./recorder";

/** Work waiting for the next turn of the event loop is bounded too: past this, it is dropped and counted. */
const MAX_DEFERRED = 4096;

/** What `klbr status` shows of telemetry. */
export interface TelemetryStatus extends ExportCounts {
  endpoint: string;
  protocol: string;
  capture_content: boolean;
}

/**
 * Trace export for one host (C18). The host hands it work as the log records events; the work
 * (reading rows back, building spans) runs on a later turn of the event loop, never on the path
 * of the cell or request that caused it, and a failing piece of it is dropped, counted, never
 * thrown back. Export itself is the SDK's batch processor, on its own timer.
 */
export class Telemetry {
  private readonly queue: Array<(recorder: SpanRecorder) => void> = [];
  private scheduled = false;
  private skipped = 0;
  private closed = false;
  readonly recorder: SpanRecorder;

  private constructor(
    readonly config: TelemetryConfig,
    private readonly pipeline: ExportPipeline,
  ) {
    this.recorder = new SpanRecorder(pipeline.tracer, config.captureContent);
  }

  /** Start export when the environment asks for it (OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT); null when off. */
  static start(env: NodeJS.ProcessEnv = process.env, options: ExportOptions = {}): Telemetry | null {
    const config = telemetryConfig(env);
    if (!config) return null;
    return new Telemetry(config, startExport(config, options));
  }

  /** One line for `klbr serve`: where traces go. */
  describe(): string {
    return `traces to ${this.config.endpoint} (OTLP ${this.config.protocol}${this.config.captureContent ? ", message contents captured" : ""})`;
  }

  /** Run `work` with the recorder on a later turn of the event loop. */
  defer(work: (recorder: SpanRecorder) => void): void {
    if (this.closed) return;
    if (this.queue.length >= MAX_DEFERRED) {
      this.skipped += 1;
      return;
    }
    this.queue.push(work);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  /** Run what is waiting now (also what close does first). */
  drain(): void {
    this.scheduled = false;
    for (const work of this.queue.splice(0)) {
      try {
        work(this.recorder);
      } catch {
        this.skipped += 1;
      }
    }
  }

  /** Counts for `klbr status`: spans exported and dropped (a span whose building failed counts as dropped). */
  status(): TelemetryStatus {
    const counts = this.pipeline.counts();
    return { endpoint: this.config.endpoint, protocol: this.config.protocol, capture_content: this.config.captureContent, ...counts, dropped: counts.dropped + this.skipped };
  }

  /** Build what is waiting, end open spans, flush and stop export, within `timeoutMs`. */
  async close(nowMs: number, timeoutMs = 2000): Promise<void> {
    if (this.closed) return;
    this.drain();
    this.closed = true;
    this.recorder.close(nowMs);
    await this.pipeline.shutdown(timeoutMs);
  }
}
