import type { InterruptOutcome, InterruptRung } from "./completion.js";

/** Identifier shape of C2: 1..128 of A-Z a-z 0-9 _ . - */
export const IDENTIFIER = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * One operation sent to a worker (a cell or a hook call): settles exactly once, remembers the
 * interrupt rung in progress, and aborts its signal when it ends so late work can stop.
 */
export class Operation<C> {
  readonly id: string;
  readonly startedAt: number;
  readonly promise: Promise<C>;
  rung: InterruptRung | undefined;
  ladder: Promise<InterruptOutcome> | undefined;
  #result: C | undefined;
  #ended = false;
  #resolve!: (value: C) => void;
  #controller: AbortController | undefined;

  constructor(id: string, startedAt: number = Date.now()) {
    this.id = id;
    this.startedAt = startedAt;
    this.promise = new Promise<C>((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** Aborted when the operation settles; made on first use, since most cells never need it. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort(new Error(`operation ${this.id} has ended`));
    }
    return this.#controller.signal;
  }

  /** True once settled. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The settled completion, if any. */
  get result(): C | undefined {
    return this.#result;
  }

  /** Settle with `completion`; false (and nothing happens) when already settled. */
  settle(completion: C): boolean {
    if (this.#ended) return false;
    this.#ended = true;
    this.#result = completion;
    this.#controller?.abort(new Error(`operation ${this.id} has ended`));
    this.#resolve(completion);
    return true;
  }

  /** Resolve true if the operation settles within `ms`, false otherwise. */
  endsWithin(ms: number): Promise<boolean> {
    if (this.#ended) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.promise.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
