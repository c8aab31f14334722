import { SupervisorError } from "./errors.js";
import type { Identity } from "./wire.js";

/**
 * The session and generation every envelope of one worker carries; the channel reads them for each
 * frame. A worker started for a session keeps them. A warm spare (C19) starts with placeholders
 * and is given its identity once, at bind, as one line on its stdin: the worker may connect before
 * (it prepares everything it can), but sends its first envelope, the hello, only after reading that
 * line, so no envelope ever carries a placeholder.
 */
export class WorkerIdentity implements Identity {
  #sessionId: string;
  #generation: string;
  readonly #spare: boolean;

  constructor(sessionId: string, generation: string, spare: boolean) {
    this.#sessionId = sessionId;
    this.#generation = generation;
    this.#spare = spare;
  }

  get sessionId(): string {
    return this.#sessionId;
  }

  get generation(): string {
    return this.#generation;
  }

  /**
   * Give a spare its identity: from here on envelopes name `sessionId` and `generation`, and the
   * worker reads them from `control` (its stdin). `control` is undefined unless the worker still
   * waits for it (spawned, no hello yet); `pid` only names the worker in the error.
   */
  bind(sessionId: string, generation: string, control: NodeJS.WritableStream | undefined, pid: number): void {
    if (!this.#spare || !control) {
      throw new SupervisorError("WORKER_INVALID_ARGUMENT", `worker pid ${pid} is not a spare waiting for its identity`);
    }
    this.#sessionId = sessionId;
    this.#generation = generation;
    control.write(`${JSON.stringify({ session_id: sessionId, generation })}\n`);
  }
}
