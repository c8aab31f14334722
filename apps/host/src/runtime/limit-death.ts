import type { Worker, WorkerExit } from "@klbr/supervisor";
import type { HostDb } from "../db/open";
import { recordIncident } from "../store/incidents";
import { limitReason } from "./completion";
import type { Workbench } from "./workbench";

/**
 * C17 (amended): a limit that ends a workbench's worker between cells (a thread or task its last
 * cell left running) is in no cell's record, so it is recorded as an incident naming the limit
 * (`klbr log` shows it; the model's records do not), and the next generation's kernel.reset
 * reason is that limit, not `worker_died`. A limit that ends a running cell is that cell's failed
 * record, and the restart after it already names the limit (Cells.execute).
 */
export function watchLimitDeath(db: HostDb, now: () => number, bench: Workbench, worker: Worker): void {
  worker.onDeath((exit) => {
    const limit = limitReason(exit);
    if (limit === null || bench.diedInCell === worker || runsCellOf(bench, worker)) return;
    // Culling's own stop is not a limit; whichever was first is the reason.
    if (bench.worker === worker) bench.endedFor ??= limit;
    recordIncident(db, "workbench.limit", incidentDetail(bench, worker, limit, exit), now());
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

function incidentDetail(bench: Workbench, worker: Worker, limit: string, exit: WorkerExit) {
  return {
    session_id: bench.sessionId,
    generation: worker.generation,
    pid: worker.pid,
    reason: limit,
    detail: exit.detail ?? null,
    between_cells: true,
    exit: { code: exit.code, signal: exit.signal },
  };
}
