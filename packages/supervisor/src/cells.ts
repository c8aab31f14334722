import type { CellCompletion, EndedBy, WorkerExit } from "./completion.js";
import type { HostRequestHandler } from "./options.js";
import type { Operation } from "./operation.js";
import { cellEnd, type StopInfo } from "./records.js";
import type { CompletedResult } from "./wire.js";
import { merged } from "./merged.js";

/** The foreground cell and what its host requests have used so far. */
export interface CellRun {
  op: Operation<CellCompletion>;
  handler: HostRequestHandler | undefined;
  /** Host requests seen, refused ones included (the 129th is refused). */
  requests: number;
  /** Set once the host accepted a runtime.wait: later requests are refused, `yielded` is allowed. */
  waitAccepted: boolean;
}

/** The one cell a workbench runs at a time; cleared before its operation settles, so never an ended one. */
export class CellSlot {
  #run: CellRun | undefined;

  get run(): CellRun | undefined {
    return this.#run;
  }

  /** The running cell's operation, when its id is `id`. */
  find(id: string): Operation<CellCompletion> | undefined {
    return this.#run?.op.id === id ? this.#run.op : undefined;
  }

  begin(op: Operation<CellCompletion>, handler: HostRequestHandler | undefined): void {
    this.#run = { op, handler, requests: 0, waitAccepted: false };
  }

  /**
   * Settle `run` with the worker's `result`; `shutdown`: a graceful shutdown is under way. Returns
   * the protocol violation that must invalidate the worker instead (the cell then stays running).
   */
  complete(run: CellRun, result: CompletedResult, shutdown: boolean): string | undefined {
    const cell = run.op;
    // A rung ended the cell only if the worker says it was interrupted: a cell that completes
    // otherwise while a rung is in force (a C call the kick cut short, then the cell's own code
    // went on to its end) finished on its own, and the record must not name a rung (issue 38).
    const byRung = result.kind === "cell" && result.status === "interrupted" ? cell.rung : undefined;
    const endedBy: EndedBy = byRung ?? (shutdown ? "shutdown" : "worker");
    const base = { id: cell.id, startedAt: cell.startedAt, endedAt: Date.now(), endedBy };
    if (result.kind === "cell") {
      if (result.status === "yielded" && !run.waitAccepted) {
        return `execution ${JSON.stringify(cell.id)} yielded without an accepted wait`;
      }
      this.#run = undefined;
      cell.settle(merged(result, { id: base.id, startedAt: base.startedAt, endedAt: base.endedAt, endedBy, source: "worker" as const }));
    } else if (result.kind === "failed") {
      this.#run = undefined;
      cell.settle({ ...base, kind: "failed", source: "worker", error: result.error, reason: "worker_failed", exit: null, tails: null });
    } else {
      return `a ${result.kind} result completed cell ${JSON.stringify(cell.id)}`;
    }
    return undefined;
  }

  /** The worker is gone: settle the running cell from the host's own observation. */
  endOnDeath(stop: StopInfo, exit: WorkerExit): void {
    const cell = this.#run?.op;
    this.#run = undefined;
    if (!cell) return;
    const end = cellEnd(cell, stop, exit);
    // The worker's own kick at the message rung is a SIGINT too: the ladder reports what ended it.
    if (end.endedBy === "sigint") cell.rung = "sigint";
    cell.settle(end);
  }
}
