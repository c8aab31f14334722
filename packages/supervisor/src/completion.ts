import type { OutputTails } from "./errors.js";
import type { CellResult, HookSlot, HookValue } from "./wire.js";

/** A rung of the interrupt ladder (C7). */
export type InterruptRung = "message" | "sigint" | "hard_stop";

/**
 * What ended an operation: `worker` (it completed on its own), an interrupt rung, `shutdown`
 * (the host asked the worker to exit), `invalidated` (death, protocol fault, timeout), or
 * `refused` (the host failed it without the worker: queue full, budget spent queued, worker dead).
 */
export type EndedBy = "worker" | InterruptRung | "shutdown" | "invalidated" | "refused";

/** How a worker process ended, as the host observed it. */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

/** The record of a worker's end: exit status, the stop reason code, and the raw output tails. */
export interface WorkerExit extends ExitInfo {
  /** Stable reason code: `shutdown`, `worker_exited`, `frame_error:<CODE>`, `protocol_violation`, a hardStop reason, ... */
  reason: string;
  /** What the host observed of that reason (a limit's detail names the limit and its value). */
  detail?: string;
  tails: OutputTails;
}

/** Identity and timings every completion carries. */
export interface CompletionBase {
  id: string;
  /** Date.now() when the operation was submitted (an invoke's budget starts here). */
  startedAt: number;
  /** Date.now() when the completion was settled. */
  endedAt: number;
  endedBy: EndedBy;
  /** What a cell cost (C17), set by `execute` on every cell completion; null fields where not measurable. */
  usage?: { cpuMs: number | null; peakRssBytes: number | null };
}

/** A cell result the worker sent. */
export type WorkerCellCompletion = CompletionBase & CellResult & { source: "worker" };

/**
 * A cell the host ended (hard stop or shutdown) before the worker completed it, or whose worker the
 * ladder's SIGINT killed (`rung: "sigint"`: the worker died of that signal while the ladder ran).
 */
export interface HostInterruptedCompletion extends CompletionBase {
  kind: "cell";
  status: "interrupted";
  output: [];
  truncated_bytes: 0;
  error: string;
  source: "host";
  rung: "hard_stop" | "sigint";
  reason: string;
  exit: ExitInfo | null;
  tails: OutputTails;
}

/**
 * A failure: either the worker's own `failed` completion (`source: "worker"`, reason
 * `worker_failed`) or one the host made from its own observation (`source: "host"`).
 */
export interface FailedCompletion extends CompletionBase {
  kind: "failed";
  source: "worker" | "host";
  error: string;
  /** Stable reason code: worker_failed, worker_exited, frame_error:<CODE>, envelope_error:<CODE>, protocol_violation, hook_timeout, queue_full, invalid_result, worker_dead, ... */
  reason: string;
  exit: ExitInfo | null;
  tails: OutputTails | null;
}

/** How an `execute` ended. */
export type CellCompletion = WorkerCellCompletion | HostInterruptedCompletion | FailedCompletion;

/** A hook decision the worker returned and the host validated. */
export interface HookValueCompletion<S extends HookSlot = HookSlot> extends CompletionBase {
  kind: "hook";
  source: "worker";
  value: HookValue<S>;
}

/** How an `invoke` ended. */
export type HookCompletion<S extends HookSlot = HookSlot> = HookValueCompletion<S> | FailedCompletion;

/**
 * What `interrupt(id)` reports: the rung that ended the operation, `completed` when it finished on
 * its own while the ladder climbed (no rung ended it), or that it was not running.
 */
export interface InterruptOutcome {
  rung: InterruptRung | "completed" | "not_running";
  completion?: CellCompletion | HookCompletion;
}
