import type { Worker, WorkerExit } from "@klbr/supervisor";
import type { IncidentsStore } from "../store/api";
import { noteIncident } from "./incident-note";
import { limitReason } from "./completion";
import type { Workbench } from "./workbench";

/**
 * C17 (amended): a limit that ends a workbench's worker between cells (a thread or task its last
 * cell left running) is in no cell's record, so it is recorded as an incident naming the limit
 * (`klbr log` shows it; the model's records do not), and the next generation's kernel.reset
 * reason is that limit, not `worker_died`. A limit that ends a running cell is that cell's failed
 * record, and the restart after it already names the limit (Cells.execute).
 */
export function watchLimitDeath(store: IncidentsStore, now: () => number, bench: Workbench, worker: Worker): void {
  worker.onDeath((exit) => {
    const limit = limitReason(exit);
    if (limit === null || bench.diedInCell === worker || runsCellOf(bench, worker)) return;
    // Culling's own stop is not a limit; whichever was first is the reason.
    if (bench.worker === worker) bench.endedFor ??= limit;
    noteIncident(store, "workbench.limit", incidentDetail(bench, worker, limit, exit), now());
  });
}

/**
 * The kernel.reset reason of the generation after a dead one: culled, the limit that ended it,
 * else `worker_died`. Read from the exit itself, once it is announced: the worker is `dead` (and a
 * next cell may come) a moment before its death listeners run.
 */
export async function deathReason(bench: Workbench): Promise<string> {
  const exit = bench.worker ? await bench.worker.exited : null;
  return bench.endedFor ?? limitReason(exit) ?? "worker_died";
}

/** Whether a cell of `worker`'s generation still runs (its completion has not reached Workbench.run yet). */
function runsCellOf(bench: Workbench, worker: Worker): boolean {
  const live = bench.live;
  return live !== null && !live.ended && live.generation === worker.generation;
}

/**
 * The same for a hooks worker (C17's limits apply to it too): its invokes are its cells. A limit
 * that ends it during an invoke fails that invoke naming the limit (its caller records the
 * outcome); one between invokes (a thread a hook left running) is this incident, kind
 * `workbench.limit` with `role: "hooks"`, and the replacement's `hooks.restart` names the limit.
 */
export function watchHooksLimitDeath(store: IncidentsStore, now: () => number, worker: Worker, revision: string, invokes: HooksInvokes): void {
  worker.onDeath((exit) => {
    const limit = limitReason(exit);
    if (limit === null || invokes.diedIn(worker)) return;
    noteIncident(store, "workbench.limit", {
      role: "hooks",
      revision,
      generation: worker.generation,
      pid: worker.pid,
      reason: limit,
      detail: exit.detail ?? null,
      between_cells: true,
      exit: { code: exit.code, signal: exit.signal },
    }, now());
  });
}

/**
 * Which hooks workers died with an invoke out. The supervisor settles the invoke before it
 * announces the death, and the caller may go on before or after that announcement: both an
 * invoke still counted and one that came back to a dead worker say "in an invoke".
 */
export class HooksInvokes {
  private readonly out = new WeakMap<Worker, number>();
  private readonly died = new WeakSet<Worker>();

  async run<T>(worker: Worker, invoke: () => Promise<T>): Promise<T> {
    this.out.set(worker, (this.out.get(worker) ?? 0) + 1);
    try {
      return await invoke();
    } finally {
      this.out.set(worker, (this.out.get(worker) ?? 1) - 1);
      if (worker.state === "dead") this.died.add(worker);
    }
  }

  diedIn(worker: Worker): boolean {
    return this.died.has(worker) || (this.out.get(worker) ?? 0) > 0;
  }
}

/** The limit that ended a dead hooks worker, if one did (read from its exit, once announced). */
export async function hooksDeathReason(worker: Worker): Promise<string | null> {
  return limitReason(await worker.exited);
}

function incidentDetail(bench: Workbench, worker: Worker, limit: string, exit: WorkerExit) {
  return {
    role: "workbench",
    session_id: bench.sessionId,
    generation: worker.generation,
    pid: worker.pid,
    reason: limit,
    detail: exit.detail ?? null,
    between_cells: true,
    exit: { code: exit.code, signal: exit.signal },
  };
}
