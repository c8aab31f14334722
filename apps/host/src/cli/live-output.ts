// What a terminal shows of C16 live output: a running cell's stdout and stderr as they arrive.
// The completion record stays the authority (C7): once a cell streamed, its end prints only what
// was not already shown (the result, the error, the status), so nothing is printed twice.
import type { ExecutionReport } from "../runtime/completion";
import type { LiveDisplayEvent, LiveOutputEvent } from "../runtime/live-output";
import { writeExecution } from "./render";
import { writeDisplay } from "./render-displays";

export type { LiveDisplayEvent, LiveOutputEvent };

/** What a cell's watcher is pushed: its output, and its displays (C20) once stored. */
export type LiveEvent = LiveOutputEvent | LiveDisplayEvent;

/** Whether a pushed event is a stored display (C20). */
export function isLiveDisplayEvent(event: unknown): event is LiveDisplayEvent {
  const e = event as Partial<LiveDisplayEvent> | null;
  return typeof e === "object" && e !== null && e.type === "display" && typeof e.execution_id === "string" && typeof e.display === "object" && e.display !== null;
}

/** Whether a pushed event is live output. */
export function isLiveOutputEvent(event: unknown): event is LiveOutputEvent {
  const e = event as Partial<LiveOutputEvent> | null;
  return (
    typeof e === "object" &&
    e !== null &&
    e.type === "output" &&
    typeof e.execution_id === "string" &&
    (e.stream === "stdout" || e.stream === "stderr") &&
    typeof e.text === "string" &&
    Number.isSafeInteger(e.dropped_bytes)
  );
}

/** The note for bytes a cell wrote that were not streamed (they may still be in its completion record). */
export function droppedNote(bytes: number): string {
  return `klbr: ${bytes} bytes of live output were not streamed (too fast to stream; the completion record keeps the first 65,536 bytes)\n`;
}

/**
 * Writes one execution's live output as it arrives, stdout to `out` and stderr to `err`, and then
 * the end of its record. Text is written as it came, partial lines included, so a pipe reader
 * (`klbr exec ... | head`) sees every byte the cell's stdout streamed, in order.
 */
export class LiveExecutionWriter {
  private streamed = false;
  private dropped = 0;
  /** The seqs of the displays printed as they came (the end prints the others). */
  private readonly shown = new Set<number>();

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly err: NodeJS.WritableStream,
  ) {}

  /** Write one live output message or display (events of other executions are the caller's to filter). */
  write(event: LiveEvent): void {
    if (event.type === "display") {
      this.shown.add(event.display.seq);
      writeDisplay(event.display, this.out);
      return;
    }
    this.streamed = true;
    (event.stream === "stderr" ? this.err : this.out).write(event.text);
    if (event.dropped_bytes > 0) {
      this.dropped += event.dropped_bytes;
      this.err.write(droppedNote(event.dropped_bytes));
    }
  }

  /** Whether any live output arrived. */
  get received(): boolean {
    return this.streamed;
  }

  /** Write the end of the record: all of it when nothing streamed, else what streaming did not show. */
  finish(report: ExecutionReport): void {
    if (!this.streamed) return writeExecution(report, this.out, this.err, this.shown);
    writeExecution({ ...report, output: report.output.filter((record) => record.stream === "result") }, this.out, this.err, this.shown);
  }
}

/** One line of live output, for the views that show it line by line. */
export interface LiveLine {
  execution_id: string;
  session_id: string;
  stream: "stdout" | "stderr";
  text: string;
}

/**
 * Splits live output into lines for views that prefix each line (`klbr chat`, `klbr log --follow`):
 * complete lines go out at once, an unfinished one waits for the rest of it, or for `flush`
 * (the cell ended, or the view is closing), so no partial line is lost either way.
 */
export class LiveLines {
  private readonly partial = new Map<string, LiveLine>();

  constructor(private readonly emit: (line: LiveLine) => void) {}

  /** Take one event; emits each line it completes (without its newline), then a note of drops. */
  push(event: LiveOutputEvent): void {
    const key = `${event.execution_id}\u0000${event.stream}`;
    const head = { execution_id: event.execution_id, session_id: event.session_id, stream: event.stream };
    const lines = ((this.partial.get(key)?.text ?? "") + event.text).split("\n");
    const rest = lines.pop()!;
    for (const text of lines) this.emit({ ...head, text });
    if (rest === "") this.partial.delete(key);
    else this.partial.set(key, { ...head, text: rest });
    if (event.dropped_bytes > 0) this.emit({ ...head, stream: "stderr", text: `[klbr: ${event.dropped_bytes} bytes not streamed]` });
  }

  /** Emit what is left unfinished: of one execution, or of every one. */
  flush(executionId?: string): void {
    for (const [key, line] of [...this.partial]) {
      if (executionId !== undefined && line.execution_id !== executionId) continue;
      this.partial.delete(key);
      this.emit(line);
    }
  }
}
