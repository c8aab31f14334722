// C20 rich display on one worker connection: the rules that span messages (DisplaySequence from
// @klbr/envelope) and the running cell's listener. The frame loop hands every `display` here and
// invalidates the generation when this says the message broke a rule; what one message may hold
// (MIME keys, text/plain, base64 of image/png and image/jpeg, klbr/omitted) the envelope checked.
import { DisplaySequence, type DisplayMessage } from "@klbr/envelope";

/** The argument a workbench is started with when the host asks for rich display (C20). */
export const DISPLAY_FLAG = "--display";

/**
 * One rich display of a running cell (C20), as the worker sent it and @klbr/envelope validated
 * it (never stored by the supervisor). `data` always holds `text/plain`; `image/png` and
 * `image/jpeg` are canonical base64 whose bytes start with that format's signature; every other
 * value is text. `metadata["klbr/omitted"]`, when present, is `{mime: bytes}`: what did not fit
 * the 1 MiB frame (only `text/plain` can be both in `data` and there: then it was cut by that many bytes).
 */
export interface CellDisplay {
  /** The execution id. */
  id: string;
  /** 0, 1, 2, ... per execution (at most 31: a cell shows at most 32, the rest are `displays_dropped`). */
  seq: number;
  /** MIME type -> content. */
  data: Record<string, string>;
  /** MIME type -> object (Jupyter's per-type metadata, e.g. `{"image/png": {"width": 640}}`). */
  metadata: Record<string, Record<string, unknown>>;
}

/**
 * Receives a cell's displays, called synchronously in seq order as each frame is read, every call
 * before the cell's completion resolves. The completion does not wait for work the listener
 * starts (store asynchronously, and await that before replying). A throw is the listener's own
 * problem, never the worker's.
 */
export type DisplayListener = (display: CellDisplay) => void;

/** One connection's display state. */
export class CellDisplays {
  private readonly sequence: DisplaySequence;
  private readonly listeners = new Map<string, DisplayListener>();

  constructor(negotiated: boolean) {
    this.sequence = new DisplaySequence({ negotiated });
  }

  /** Whether the worker was started with {@link DISPLAY_FLAG}. */
  get negotiated(): boolean {
    return this.sequence.negotiated;
  }

  /** An `execute` was sent: its displays count from seq 0 and go to `listener`. */
  started(id: string, listener: DisplayListener | undefined): void {
    this.sequence.sent({ kind: "execute", id });
    if (listener) this.listeners.set(id, listener);
    else this.listeners.delete(id);
  }

  /** The worker sent `message` (a valid `display`): deliver it, or return why it breaks C20. */
  display(message: DisplayMessage): string | null {
    try {
      this.sequence.received(message);
    } catch (error) {
      return (error as Error).message;
    }
    const listener = this.listeners.get(message.id);
    if (listener) {
      try {
        listener({ id: message.id, seq: message.seq, data: message.data, metadata: message.metadata });
      } catch {
        // A broken consumer is not a protocol fault of the worker.
      }
    }
    return null;
  }

  /**
   * The worker completed `id` with `result` (its `displays_dropped` is checked: present exactly
   * when negotiated, and more than 0 only after 32 displays), or the cell is otherwise over
   * (`result` undefined). Returns why the completion breaks C20, or null.
   */
  completed(id: string, result?: { kind: string; displays_dropped?: number }): string | null {
    this.listeners.delete(id);
    try {
      this.sequence.received({ kind: "completed", id, ...(result === undefined ? {} : { result }) });
    } catch (error) {
      return (error as Error).message;
    }
    return null;
  }
}
