import { SupervisorError } from "./errors.js";
import { checkHello } from "./hello.js";
import type { WorkerRole } from "./options.js";
import { namespaceProcs, onlyChild, type NamespaceProcs, type PinnedProc } from "./sandbox.js";
import type { HelloMessage, InboundMessage } from "./wire.js";

/**
 * The wait for a worker's hello: settles once, on the first valid hello or the first failure
 * (timeout, early exit, bad hello, socket error). `onFail` runs before the rejection is seen.
 */
export class Handshake {
  readonly ready: Promise<void>;
  #pending: { resolve(): void; reject(err: SupervisorError): void } | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #onFail: () => void;

  constructor(onFail: () => void) {
    this.#onFail = onFail;
    this.ready = new Promise<void>((resolve, reject) => {
      this.#pending = { resolve, reject };
    });
    // A failure nobody waits for (the spawn itself failed) is not an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** True until the hello was accepted or the handshake failed. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /** Fail with `makeError()` unless settled within `ms`. */
  armTimeout(ms: number, makeError: () => SupervisorError): void {
    this.#timer = setTimeout(() => this.fail(makeError()), ms);
  }

  disarm(): void {
    clearTimeout(this.#timer);
  }

  fail(err: SupervisorError): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    this.#onFail();
    pending.reject(err);
  }

  succeed(): void {
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.resolve();
  }
}

/** What a hello must match, and where the worker runs. */
export interface HelloCheck {
  token: string;
  role: WorkerRole;
  expect: { revision?: string | null; skills?: string | null } | undefined;
  /** The guard's pid. */
  pid: number;
  /** The worker command as the guard reported it, if it has. */
  inner: PinnedProc | undefined;
  /** The sandbox promised a pid namespace. */
  pidNamespace: boolean;
}

/** A worker whose hello was accepted, with the processes the interrupt ladder and the hard stop target. */
export interface AcceptedHello {
  hello: HelloMessage;
  inner: PinnedProc | undefined;
  ns: NamespaceProcs | undefined;
}

/** Accept the first message as the worker's hello, or throw the SupervisorError that fails the handshake. */
export function acceptHello(message: InboundMessage, check: HelloCheck): AcceptedHello {
  if (message.kind !== "hello") {
    throw new SupervisorError("WORKER_PROTOCOL", `the first message must be hello, got ${JSON.stringify(message.kind)}`);
  }
  const hello = message as HelloMessage;
  checkHello(hello, { token: check.token, role: check.role, revision: check.expect?.revision, skills: check.expect?.skills });
  // The guard reports its child before the worker can connect; /proc says the same otherwise.
  const inner = check.inner ?? onlyChild(check.pid);
  if (!check.pidNamespace) return { hello, inner, ns: undefined };
  // Before any cell runs, the init has one child, the worker: pinned now, the SIGINT rung and
  // the hard stop never have to guess which process inside is which.
  const ns = inner ? namespaceProcs(inner.pid) : undefined;
  if (!ns) {
    throw new SupervisorError("WORKER_PROTOCOL", `pid ${check.pid} does not run the worker under a pid namespace init as its sandbox promised`);
  }
  return { hello, inner, ns };
}
