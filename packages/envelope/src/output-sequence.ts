// The rules of C16 live output that span messages: whether the host asked for `output` at all,
// which operation may send it, in what order, and never after that operation's `completed`.
// One envelope cannot tell any of that, so a connection keeps one OutputSequence and feeds it
// every message it sends and receives; a throw means the generation is invalid.
import { EnvelopeError } from "./error.js";
import { OUTPUT_SEQUENCE_MEMORY } from "./limits.js";

/** The part of a message an {@link OutputSequence} reads. */
export interface SequencedMessage {
  kind: string;
  id?: string;
  seq?: number;
}

/** Options of an {@link OutputSequence}. */
export interface OutputSequenceOptions {
  /** True when the worker was started with `--live-output` (a hooks worker never is). */
  negotiated: boolean;
}

/**
 * Per-connection checker of `output` messages (C16). `sent` sees what the host sends (an
 * `execute` starts an operation at seq 0); `received` sees what the worker sends and throws an
 * {@link EnvelopeError} (paths relative to the message) when an `output` is not negotiated, names
 * no running `execute`, follows its `completed`, or is out of order. Memory is bounded: the
 * running operations (one at a time in practice) and the last {@link OUTPUT_SEQUENCE_MEMORY}
 * completed ids, so an older id reads as unknown rather than as completed.
 */
export class OutputSequence {
  readonly negotiated: boolean;
  private readonly running = new Map<string, number>();
  private readonly completed = new Set<string>();

  constructor(options: OutputSequenceOptions) {
    this.negotiated = options.negotiated;
  }

  /** The host sent `message` to the worker. */
  sent(message: SequencedMessage): void {
    if (message.kind !== "execute" || message.id === undefined) return;
    this.completed.delete(message.id);
    this.running.set(message.id, 0);
  }

  /** The worker sent `message` (already a valid message). Throws {@link EnvelopeError}. */
  received(message: SequencedMessage): void {
    if (message.kind === "output") {
      this.output(message);
    } else if (message.kind === "completed" && message.id !== undefined && this.running.delete(message.id)) {
      this.remember(message.id);
    }
  }

  /** The seq the next `output` of `id` must carry; undefined when `id` is not running. */
  nextSeq(id: string): number | undefined {
    return this.running.get(id);
  }

  private output(message: SequencedMessage): void {
    if (!this.negotiated) {
      throw new EnvelopeError("ENVELOPE_OUTPUT_NOT_NEGOTIATED", "kind", message.kind, "no output: the worker was not started with --live-output");
    }
    const id = message.id as string;
    const next = this.running.get(id);
    if (next === undefined) {
      if (this.completed.has(id)) {
        throw new EnvelopeError("ENVELOPE_OUTPUT_AFTER_COMPLETED", "id", id, "the id of a running execute (this one completed)");
      }
      throw new EnvelopeError("ENVELOPE_OUTPUT_UNKNOWN_OPERATION", "id", id, "the id of a running execute");
    }
    if (message.seq !== next) throw new EnvelopeError("ENVELOPE_OUTPUT_SEQUENCE", "seq", message.seq, `seq ${next}`);
    this.running.set(id, next + 1);
  }

  private remember(id: string): void {
    this.completed.add(id);
    if (this.completed.size > OUTPUT_SEQUENCE_MEMORY) {
      // A Set iterates in insertion order: the first is the oldest.
      this.completed.delete(this.completed.values().next().value as string);
    }
  }
}
