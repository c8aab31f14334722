// C16 live output on one worker connection: the rules that span messages (OutputSequence from
// @klbr/envelope) and the running cell's listener. The frame loop hands every `output` here and
// invalidates the generation when this says the message broke a rule.
import { OutputSequence, type OutputMessage } from "@klbr/envelope";

/** The argument a worker is started with when the host asks for live output (C16). */
export const LIVE_OUTPUT_FLAG = "--live-output";

/** One piece of a running cell's output, as the worker sent it (never stored by the supervisor). */
export interface CellOutput {
  /** The execution id. */
  id: string;
  /** 0, 1, 2, ... per execution. */
  seq: number;
  stream: "stdout" | "stderr";
  /** 1..16,384 UTF-8 bytes, cut on a character boundary. */
  text: string;
  /** Bytes the cell wrote since the previous message that were not sent (too fast to stream). */
  dropped_bytes: number;
}

/** Receives a cell's live output; a throw is the listener's own problem, never the worker's. */
export type OutputListener = (output: CellOutput) => void;

/** One connection's live output state. */
export class LiveOutputs {
  private readonly sequence: OutputSequence;
  private readonly listeners = new Map<string, OutputListener>();

  constructor(negotiated: boolean) {
    this.sequence = new OutputSequence({ negotiated });
  }

  /** Whether the worker was started with {@link LIVE_OUTPUT_FLAG}. */
  get negotiated(): boolean {
    return this.sequence.negotiated;
  }

  /** An `execute` was sent: its outputs count from seq 0 and go to `listener`. */
  started(id: string, listener: OutputListener | undefined): void {
    this.sequence.sent({ kind: "execute", id });
    if (listener) this.listeners.set(id, listener);
    else this.listeners.delete(id);
  }

  /**
   * The worker sent `message` (a valid `output`): deliver it, or return why it breaks C16 (the
   * caller invalidates the generation). A listener that throws does not stop the delivery order.
   */
  output(message: OutputMessage): string | null {
    try {
      this.sequence.received(message);
    } catch (error) {
      return (error as Error).message;
    }
    const listener = this.listeners.get(message.id);
    if (listener) {
      try {
        listener({ id: message.id, seq: message.seq, stream: message.stream, text: message.text, dropped_bytes: message.dropped_bytes });
      } catch {
        // A broken consumer (a closed client) is not a protocol fault of the worker.
      }
    }
    return null;
  }

  /** The worker completed `id` (or the cell is otherwise over): later outputs for it are violations. */
  completed(id: string): void {
    this.sequence.received({ kind: "completed", id });
    this.listeners.delete(id);
  }
}
