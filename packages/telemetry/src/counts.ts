import type { Context } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** What export has done so far: spans the collector took, and spans that will never reach it. */
export interface ExportCounts {
  /** Spans the collector accepted. */
  exported: number;
  /** Spans dropped: the queue was full, or their export failed (collector down, refused, timed out). */
  dropped: number;
  /** Spans ended and not yet settled either way (queued or in an export under way). */
  pending: number;
}

/**
 * Counts every span's fate, and says once that export is failing. Wraps the batch processor
 * (admission: a span is dropped, counted, when as many are already waiting as the queue holds, so
 * the SDK's own queue never drops uncounted) and its exporter (settlement: exported or failed).
 */
export class ExportLedger {
  private ended = 0;
  private exported = 0;
  private failed = 0;
  private refused = 0;
  private warned = false;

  constructor(
    private readonly capacity: number,
    private readonly warn: (reason: string) => void,
  ) {}

  /** Take one ended span into the queue, or refuse it (counted) when the queue is full. */
  admit(): boolean {
    if (this.ended - this.exported - this.failed >= this.capacity) {
      this.refused += 1;
      this.warnOnce("the export queue is full");
      return false;
    }
    this.ended += 1;
    return true;
  }

  /** An export of `n` spans came back. */
  settled(n: number, result: ExportResult): void {
    if (result.code === ExportResultCode.SUCCESS) {
      this.exported += n;
      return;
    }
    this.failed += n;
    this.warnOnce(result.error?.message ?? "the collector refused them");
  }

  /** The counts now. */
  counts(): ExportCounts {
    return { exported: this.exported, dropped: this.failed + this.refused, pending: this.ended - this.exported - this.failed };
  }

  private warnOnce(reason: string): void {
    if (this.warned) return;
    this.warned = true;
    try {
      this.warn(reason);
    } catch {
      /* a warning that cannot be written must not become the host's problem */
    }
  }
}

/** An exporter that reports each export's outcome to the ledger, then to the processor. */
export class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly ledger: ExportLedger,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    let once = false;
    const done = (result: ExportResult) => {
      if (once) return;
      once = true;
      this.ledger.settled(spans.length, result);
      resultCallback(result);
    };
    try {
      this.inner.export(spans, done);
    } catch (error) {
      done({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The batch processor behind the ledger's admission check. */
export class AdmittingProcessor implements SpanProcessor {
  constructor(
    private readonly inner: SpanProcessor,
    private readonly ledger: ExportLedger,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (!span.spanContext().traceFlags) return; // not sampled: never exported, nothing to count
    if (this.ledger.admit()) this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
