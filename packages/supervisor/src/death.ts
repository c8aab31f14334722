import type { WorkerExit } from "./completion.js";
import { untrackWorker } from "./exit-hook.js";
import type { TreeKiller } from "./killer.js";
import { removePrivateDir } from "./private-dir.js";

/** A worker's `exited` promise and its death listeners: both told once, the promise first. */
export class DeathNotice {
  readonly exited: Promise<WorkerExit>;
  readonly #listeners = new Set<(exit: WorkerExit) => void>();
  #resolve!: (exit: WorkerExit) => void;

  constructor() {
    this.exited = new Promise<WorkerExit>((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** Call `listener` once with the exit; `dead`: the worker is already dead (told after `exited`). */
  subscribe(listener: (exit: WorkerExit) => void, dead: boolean): () => void {
    if (dead) {
      void this.exited.then(listener);
      return () => undefined;
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  announce(exit: WorkerExit): void {
    this.#resolve(exit);
    for (const listener of this.#listeners) listener(exit);
    this.#listeners.clear();
  }
}

/** What is left of a dead worker on the host's side. */
export interface Remains {
  pid: number;
  dir: string;
  killer: TreeKiller | undefined;
  streams: Array<{ destroy(): unknown } | null | undefined>;
}

/**
 * Confirm the tree and every tagged process gone, remove the private directory, and let go of the
 * pipes: a process that escaped every kill (another uid's, say) may still hold them, and they must
 * not keep the host alive.
 */
export async function clearRemains(remains: Remains): Promise<void> {
  await remains.killer?.confirm();
  await removePrivateDir(remains.dir);
  for (const stream of remains.streams) stream?.destroy();
  untrackWorker(remains.pid);
}
