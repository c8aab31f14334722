import type { ExecutionReport } from "../runtime/completion";
import { droppedDisplaysNote, writeDisplay } from "./render-displays";

/** Exit statuses by cell status: 0 ok/yielded, 1 error, 130 interrupted (like SIGINT), 70 failed (EX_SOFTWARE). */
export const EXIT_BY_STATUS: Record<string, number> = { ok: 0, yielded: 0, error: 1, interrupted: 130, failed: 70, running: 70 };

/**
 * Write a cell's outputs the way a terminal user expects: stdout and results on stdout, stderr and
 * errors on stderr; its displays (C20) after its output, except those with a seq in `shown`
 * (printed live already).
 */
export function writeExecution(report: ExecutionReport, out: NodeJS.WritableStream, err: NodeJS.WritableStream, shown: ReadonlySet<number> = new Set()): void {
  for (const record of report.output) {
    const text = record.stream === "result" && !record.text.endsWith("\n") ? `${record.text}\n` : record.text;
    (record.stream === "stderr" ? err : out).write(text);
  }
  for (const display of report.displays ?? []) if (!shown.has(display.seq)) writeDisplay(display, out);
  if ((report.displays_dropped ?? 0) > 0) err.write(droppedDisplaysNote(report.displays_dropped));
  if (report.truncated_bytes > 0) err.write(`klbr: ${report.truncated_bytes} bytes of output were cut (limit 65,536 bytes / 256 records)\n`);
  if (report.error) err.write(report.error.endsWith("\n") ? report.error : `${report.error}\n`);
  if (report.status === "yielded") err.write("klbr: the cell yielded (a durable wait was accepted)\n");
  if (report.status === "interrupted") err.write(`klbr: interrupted${report.ended_by ? ` (${report.ended_by})` : ""}\n`);
  if (report.status === "failed") err.write(`klbr: the worker failed: ${JSON.stringify(report.failure)}\n`);
}

/** A notification as one human line, or null for those not worth a line. */
export function describeEvent(event: unknown): string | null {
  const e = event as Record<string, unknown>;
  switch (e.type) {
    case "message":
      return `[to operator] ${String(e.text)}`;
    case "wake": {
      const inputs = (e.inputs as string[] | undefined) ?? [];
      return [`[wake] wait ${String(e.wait_id)} woken by ${String(e.woken_by)}`, ...inputs].join("\n");
    }
    case "hooks":
      return `[hooks] revision ${String(e.revision).slice(0, 12)} active at epoch ${String(e.epoch)}`;
    case "kernel.reset":
      return `[kernel.reset] ${String(e.session_id)} generation ${String(e.generation)}`;
    case "input":
      // Operator input is what the user just typed; a peer's request or result is news to them.
      return e.source === "peer" ? `[peer input] event ${String(e.event_id)} for ${String(e.session_id)}` : null;
    case "session.stopped":
      return `[session.stopped] ${String(e.session_id)}${e.drain ? " (drained)" : ""}`;
    default:
      return null;
  }
}
