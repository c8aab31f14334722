import { SupervisorError } from "./errors.js";
import { IDENTIFIER } from "./operation.js";
import type { WorkerExit } from "./completion.js";
import type { StartWorkerOptions, Worker } from "./options.js";
import { prepareWorker } from "./start.js";

/** Options of {@link startSpare}: those of a workbench, without the identity it gets when taken. */
export type SpareOptions = Omit<StartWorkerOptions, "role" | "sessionId" | "generation" | "transport" | "spare">;

/**
 * A warm spare workbench (C19): spawned with its runtime imported and its skills installed, it
 * waits for a session to take it. {@link SpareWorker.bind} gives it that session and generation
 * and completes the handshake: the first envelope it sends already names them.
 */
export interface SpareWorker {
  /** The spare's process (its guard until the guard reported the worker). */
  readonly pid: number;
  /** False once the spare died or was bound or discarded: it can no longer be taken. */
  readonly available: boolean;
  /** Settles when the spare's tree is gone (after a discard, or if it dies unbound). */
  readonly exited: Promise<WorkerExit>;
  /** Take the spare for `sessionId`'s `generation`: resolves once its hello was checked. */
  bind(sessionId: string, generation: string): Promise<Worker>;
  /** Stop an unbound spare and its tree. */
  discard(): Promise<void>;
}

/** Placeholders until bind: never sent (the worker says hello only once it has its identity). */
const UNBOUND = "spare";

/** Start a spare workbench; resolves once it is spawned (it finishes its own start-up meanwhile). */
export async function startSpare(opts: SpareOptions): Promise<SpareWorker> {
  const worker = await prepareWorker({ ...opts, role: "workbench", sessionId: UNBOUND, generation: UNBOUND, spare: true });
  await worker.launch();
  let taken = false;
  let dead = false;
  void worker.exited.then(() => (dead = true));
  return {
    get pid() {
      return worker.pid;
    },
    get available() {
      return !taken && !dead;
    },
    exited: worker.exited,
    async bind(sessionId: string, generation: string): Promise<Worker> {
      for (const [name, value] of [["sessionId", sessionId], ["generation", generation]] as const) {
        if (!IDENTIFIER.test(value)) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `${name} ${JSON.stringify(value)} is not an identifier`);
      }
      if (taken) throw new SupervisorError("WORKER_INVALID_ARGUMENT", `spare pid ${worker.pid} was already taken`);
      if (dead) throw new SupervisorError("WORKER_DEAD", `spare pid ${worker.pid} died before it was taken`);
      taken = true;
      worker.bindIdentity(sessionId, generation);
      await worker.handshake();
      return worker;
    },
    async discard(): Promise<void> {
      if (taken) return;
      taken = true;
      await worker.hardStop("spare_discarded");
    },
  };
}
