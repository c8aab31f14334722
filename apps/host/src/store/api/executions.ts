import type { ExecutionRow, ExecutionStatus } from "../executions";

/** Executions records (store/executions.ts). */
export interface ExecutionsStore {
  /** Open an execution record before the cell is sent, so a crash mid-cell leaves evidence. */
  startExecution(row: { id: string; sessionId: string; generation: string; code: string; startedAtMs: number; origin?: string | null }): Promise<ExecutionRow>;
  /** Close an execution with what the worker (or the host's own observation) reported. */
  finishExecution(sessionId: string, id: string, end: { status: ExecutionStatus; output?: unknown; truncatedBytes?: number | null; error?: string | null; endedBy?: string | null; failure?: unknown; endedAtMs: number; /** What the cell cost (C17): null where not measured. */ cpuMs?: number | null; peakRssBytes?: number | null; /** C20: displays the cell could not show; null where the cell never ran under a display-capable record. */ displaysDropped?: number | null; }): Promise<ExecutionRow | undefined>;
  /** Executions still marked running (after a crash these were cut short). */
  runningExecutions(): Promise<ExecutionRow[]>;
  /** One execution by id. */
  getExecution(id: string): Promise<ExecutionRow | undefined>;
}
