/** What the chat's keys act on: the session's turn, its input, and the way out. */
export interface ChatKeysTarget {
  /** Stop the running turn; resolves whether one was running. */
  stopTurn(): Promise<boolean>;
  /** Send one line as operator input. */
  say(text: string): Promise<void>;
  /** Say something to the person at the keyboard (a line of its own). */
  note(text: string): void;
  /** Show the prompt again. */
  prompt(): void;
  /** Leave the chat with this exit status. */
  leave(code: number): void;
}

/** How long a second Ctrl-C leaves rather than stops. */
export const DOUBLE_CTRL_C_MS = 2000;

/**
 * The keys of an interactive chat, as every agent CLI has them: Ctrl-C stops the running turn
 * (the route call is aborted, a running cell is interrupted, the turn ends `operator_interrupted`)
 * and the prompt returns; a second Ctrl-C within 2 s, with no line typed between, leaves with exit
 * status 130 (Ctrl-D leaves too). A line typed while a turn runs is queued, shown as queued, and sent when the turn ends.
 */
export class ChatKeys {
  private turnRunning = false;
  private readonly queue: string[] = [];
  private lastCtrlC = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly target: ChatKeysTarget,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  /** A turn of the session started (its `turn_start` notification). */
  turnStarted(): void {
    this.turnRunning = true;
  }

  /** A turn of the session ended: the lines queued meanwhile go out now, in order. */
  async turnEnded(): Promise<void> {
    this.turnRunning = false;
    await this.flush();
    this.target.prompt();
  }

  /** A line typed: sent now, or queued while a turn runs. */
  async line(text: string): Promise<void> {
    if (text.trim() === "") return this.target.prompt();
    // The person went on: their next Ctrl-C is a first one again (it stops, it does not leave).
    this.lastCtrlC = Number.NEGATIVE_INFINITY;
    if (this.turnRunning) {
      this.queue.push(text);
      this.target.note(`[queued] ${text}`);
      return this.target.prompt();
    }
    await this.target.say(text);
  }

  /** Ctrl-C: stop the running turn, or leave when it is the second within 2 s. */
  async ctrlC(): Promise<void> {
    const now = this.clock();
    const second = now - this.lastCtrlC <= DOUBLE_CTRL_C_MS;
    this.lastCtrlC = now;
    if (second) return this.leave(130);
    const stopping = this.turnRunning && (await this.target.stopTurn());
    this.target.note(stopping ? "[stopping the turn; Ctrl-C again within 2 s leaves]" : "(Ctrl-C again within 2 s, or Ctrl-D, leaves)");
    if (!stopping) this.target.prompt();
  }

  /** Leave (Ctrl-D, or a second Ctrl-C): lines still queued are sent first, so nothing typed is lost. */
  async leave(code: number): Promise<void> {
    const pending = this.queue.length;
    await this.flush();
    if (pending > 0) this.target.note(`[sent ${pending} queued line${pending === 1 ? "" : "s"} to the session]`);
    this.target.leave(code);
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) await this.target.say(this.queue.shift()!);
  }
}
