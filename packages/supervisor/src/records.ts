import type { CellCompletion, FailedCompletion, HostInterruptedCompletion, WorkerExit } from "./completion.js";

/** Why the host stopped a worker: asked to (`requested`, `shutdown`) or because it had to (`invalidated`). */
export type StopKind = "requested" | "invalidated" | "shutdown";

/** The first stop reason of a worker, with a human detail. */
export interface StopInfo {
  reason: string;
  detail: string;
  kind: StopKind;
}

/** What every record needs to know about its operation. */
export interface OperationRef {
  id: string;
  startedAt: number;
}

const SNAKE_CASE = /^[a-z][a-z0-9_]*$/;

/** The `code` of a host_reply error for a thrown value: its snake_case `code`, else `internal`. */
export function replyCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && SNAKE_CASE.test(code) ? code : "internal";
}

/** The message of a thrown value. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A failure the host made itself: with `exit` when the worker is gone (`endedBy: invalidated`),
 * without when the host refused the operation while the worker lives (`endedBy: refused`).
 */
export function hostFailure(op: OperationRef, reason: string, detail: string, exit?: WorkerExit): FailedCompletion {
  return {
    id: op.id,
    startedAt: op.startedAt,
    endedAt: Date.now(),
    endedBy: exit ? "invalidated" : "refused",
    kind: "failed",
    source: "host",
    error: `${reason}: ${detail}`,
    reason,
    exit: exit ? { code: exit.code, signal: exit.signal } : null,
    tails: exit ? exit.tails : null,
  };
}

/**
 * The record of a cell still running when its worker ended: interrupted if the host stopped it, or
 * if the worker died of SIGINT while the interrupt ladder ran (`rung` set: the ladder's signal
 * ended it, rung `sigint`); else failed.
 */
export function cellEnd(cell: OperationRef & { rung?: string }, stop: StopInfo, exit: WorkerExit): CellCompletion {
  if (stop.kind === "invalidated" && (cell.rung === "message" || cell.rung === "sigint") && exit.signal === "SIGINT" && stop.reason === "worker_exited") {
    return {
      id: cell.id,
      startedAt: cell.startedAt,
      endedAt: Date.now(),
      endedBy: "sigint",
      kind: "cell",
      status: "interrupted",
      output: [],
      truncated_bytes: 0,
      error: "the worker died of the interrupt ladder's SIGINT",
      source: "host",
      rung: "sigint",
      reason: "interrupt_sigint",
      exit: { code: exit.code, signal: exit.signal },
      tails: exit.tails,
    };
  }
  if (stop.kind === "invalidated") return hostFailure(cell, stop.reason, stop.detail, exit);
  const completion: HostInterruptedCompletion = {
    id: cell.id,
    startedAt: cell.startedAt,
    endedAt: Date.now(),
    endedBy: stop.kind === "shutdown" ? "shutdown" : "hard_stop",
    kind: "cell",
    status: "interrupted",
    output: [],
    truncated_bytes: 0,
    error: `${stop.reason}: ${stop.detail}`,
    source: "host",
    rung: "hard_stop",
    reason: stop.reason,
    exit: { code: exit.code, signal: exit.signal },
    tails: exit.tails,
  };
  return completion;
}
