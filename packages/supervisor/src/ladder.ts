import type { CellCompletion, HookCompletion, InterruptOutcome } from "./completion.js";
import type { Operation } from "./operation.js";
import type { WorkerConfig } from "./options.js";
import { signalPinned, type NamespaceProcs, type PinnedProc } from "./sandbox.js";

/** A cell or a hook call: what the ladder climbs for. */
export type AnyOperation = Operation<CellCompletion> | Operation<HookCompletion>;

/** What the interrupt ladder needs from its worker. */
export interface LadderScope {
  readonly config: WorkerConfig;
  /** The message rung: send `interrupt` for `id` (nothing when the connection is gone). */
  sendInterrupt(id: string): void;
  /** The SIGINT rung: see {@link sigintWorker}. */
  sigint(): void;
  /** The last rung: hard-stop the worker (resolves once the stop has begun to take effect). */
  hardStop(detail: string): Promise<void>;
}

/**
 * The interrupt ladder of C7 for `op`: the interrupt message, then SIGINT, then the hard stop,
 * each rung given its grace to end the operation. Resolves with the rung that ended it.
 */
export async function climbLadder(op: AnyOperation, scope: LadderScope): Promise<InterruptOutcome> {
  const outcome = (): InterruptOutcome => {
    const completion = op.result;
    if (!completion) return { rung: op.rung ?? "message" };
    // Finished on its own while a rung was in force: no rung ended it (see CellSlot.complete).
    if (completion.endedBy === "worker") return { rung: "completed", completion };
    // A hard stop from elsewhere (hardStop, shutdown) may end the cell while an earlier rung waits.
    const rung = completion.endedBy === "hard_stop" ? "hard_stop" : (op.rung ?? "message");
    return { rung, completion };
  };
  op.rung = "message";
  scope.sendInterrupt(op.id);
  if (await op.endsWithin(scope.config.interruptGraceMs)) return outcome();
  op.rung = "sigint";
  scope.sigint();
  if (await op.endsWithin(scope.config.sigintGraceMs)) return outcome();
  op.rung = "hard_stop";
  await scope.hardStop(`operation ${JSON.stringify(op.id)} ignored interrupt and SIGINT`);
  await op.promise;
  return outcome();
}

/** Run `interrupt` when `signal` aborts (at once if it has) while `op` runs. */
export function interruptOnAbort(signal: AbortSignal, op: AnyOperation, interrupt: () => void): void {
  if (signal.aborted) {
    interrupt();
    return;
  }
  signal.addEventListener("abort", interrupt, { once: true });
  void op.promise.then(() => signal.removeEventListener("abort", interrupt));
}

/** Where the SIGINT rung lands. */
export interface SigintTarget {
  /** The transport's control pipe: the far side's keeper turns `int` into the signal. */
  control: NodeJS.WritableStream | undefined;
  /** The exit was observed: the pid is reaped (and may be reused), so nothing is signalled. */
  exited: boolean;
  ns: NamespaceProcs | undefined;
  inner: PinnedProc | undefined;
  /** The guard's pid, when the guard has not reported its child. */
  pid: number;
}

/** Send the SIGINT rung to the worker itself, never to a process that reused its pid. */
export function sigintWorker(target: SigintTarget): void {
  if (target.control) {
    target.control.write("int\n");
    return;
  }
  if (target.exited) return;
  // In a pid namespace the spawned process is the sandbox's, not the worker: the worker gets it.
  if (target.ns) signalPinned(target.ns.worker, "SIGINT");
  else if (target.inner) signalPinned(target.inner, "SIGINT");
  else {
    try {
      process.kill(target.pid, "SIGINT");
    } catch {
      // already gone
    }
  }
}
