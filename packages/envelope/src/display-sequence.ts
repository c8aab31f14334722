// The rules of C20 display that span messages: whether the host asked for `display` at all,
// which operation may send it, in what order, never after that operation's `completed`, and the
// completion's `displays_dropped` (present exactly when negotiated, above 0 only once the cell
// sent all 32 it may). A connection feeds one DisplaySequence every message it sends and receives;
// a throw means the generation is invalid. The twin of OutputSequence (C16).
import { EnvelopeError } from "./error.js";
import { MAX_DISPLAYS_PER_CELL, OUTPUT_SEQUENCE_MEMORY } from "./limits.js";

/** The part of a message a {@link DisplaySequence} reads. */
export interface DisplaySequencedMessage {
  kind: string;
  id?: string;
  seq?: number;
  /** A `completed` message's result (only a cell result's `displays_dropped` is read). */
  result?: { kind: string; displays_dropped?: number };
}

/** Options of a {@link DisplaySequence}. */
export interface DisplaySequenceOptions {
  /** True when the workbench was started with `--display` (a hooks worker never is). */
  negotiated: boolean;
}

/**
 * Per-connection checker of `display` messages (C20). `sent` sees what the host sends (an
 * `execute` starts an operation at seq 0); `received` sees what the worker sends (valid messages)
 * and throws an {@link EnvelopeError} (paths relative to the message). Memory is bounded like
 * OutputSequence's: the running operations and the last {@link OUTPUT_SEQUENCE_MEMORY} completed ids.
 */
export class DisplaySequence {
  readonly negotiated: boolean;
  private readonly running = new Map<string, number>();
  private readonly completed = new Set<string>();

  constructor(options: DisplaySequenceOptions) {
    this.negotiated = options.negotiated;
  }

  /** The host sent `message` to the worker. */
  sent(message: DisplaySequencedMessage): void {
    if (message.kind !== "execute" || message.id === undefined) return;
    this.completed.delete(message.id);
    this.running.set(message.id, 0);
  }

  /** The worker sent `message` (already a valid message). Throws {@link EnvelopeError}. */
  received(message: DisplaySequencedMessage): void {
    if (message.kind === "display") {
      this.display(message);
    } else if (message.kind === "completed" && message.id !== undefined) {
      const sent = this.running.get(message.id);
      if (sent === undefined) return;
      this.running.delete(message.id);
      this.remember(message.id);
      if (message.result?.kind === "cell") this.dropped(message.result.displays_dropped, sent);
    }
  }

  /** The seq the next `display` of `id` must carry; undefined when `id` is not running. */
  nextSeq(id: string): number | undefined {
    return this.running.get(id);
  }

  private display(message: DisplaySequencedMessage): void {
    if (!this.negotiated) {
      throw new EnvelopeError("ENVELOPE_DISPLAY_NOT_NEGOTIATED", "kind", message.kind, "no display: the worker was not started with --display");
    }
    const id = message.id as string;
    const next = this.running.get(id);
    if (next === undefined) {
      if (this.completed.has(id)) {
        throw new EnvelopeError("ENVELOPE_DISPLAY_AFTER_COMPLETED", "id", id, "the id of a running execute (this one completed)");
      }
      throw new EnvelopeError("ENVELOPE_DISPLAY_UNKNOWN_OPERATION", "id", id, "the id of a running execute");
    }
    if (message.seq !== next) throw new EnvelopeError("ENVELOPE_DISPLAY_SEQUENCE", "seq", message.seq, `seq ${next}`);
    this.running.set(id, next + 1);
  }

  private dropped(count: number | undefined, sent: number): void {
    const path = "result.displays_dropped";
    if (!this.negotiated) {
      if (count !== undefined) throw new EnvelopeError("ENVELOPE_DISPLAY_NOT_NEGOTIATED", path, count, "no displays_dropped: the worker was not started with --display");
      return;
    }
    if (count === undefined) throw new EnvelopeError("ENVELOPE_MISSING_FIELD", path, undefined, "displays_dropped (the worker was started with --display)");
    if (count > 0 && sent < MAX_DISPLAYS_PER_CELL) {
      throw new EnvelopeError("ENVELOPE_DISPLAY_DROPPED", path, count, `0: the cell sent ${sent} of the ${MAX_DISPLAYS_PER_CELL} displays it may`);
    }
  }

  private remember(id: string): void {
    this.completed.add(id);
    if (this.completed.size > OUTPUT_SEQUENCE_MEMORY) {
      this.completed.delete(this.completed.values().next().value as string);
    }
  }
}
