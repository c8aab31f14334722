import type { CellCompletion } from "@klbr/supervisor";
import type { HostDb } from "../db/open";
import type { LiveExecution } from "./live-execution";
import { finishExecution, type ExecutionRow, type ExecutionStatus } from "../store/executions";

/** What a finished cell looks like to a caller (derived from its durable row). */
export interface ExecutionReport {
  id: string;
  session_id: string;
  generation: string;
  status: ExecutionRow["status"];
  output: Array<{ stream: string; text: string }>;
  truncated_bytes: number;
  error: string | null;
  ended_by: string | null;
  failure: unknown;
  started_at_ms: number;
  ended_at_ms: number | null;
}

/** Close the execution row from the completion; a yield the host never accepted is not a yield. */
export function recordCompletion(db: HostDb, live: LiveExecution, completion: CellCompletion, endedAtMs: number): ExecutionRow {
  const c = completion as CellCompletion & Record<string, unknown>;
  if (c.kind === "cell") {
    let status = c.status as ExecutionStatus;
    let error = (c.error as string | null) ?? null;
    if (status === "yielded" && !live.yielded) {
      status = "error";
      error = "the worker reported a yield the host never accepted";
    }
    return finishExecution(db, live.id, {
      status,
      output: c.output,
      truncatedBytes: c.truncated_bytes as number,
      error,
      endedBy: (c.endedBy as string | undefined) ?? (status === "interrupted" ? "message" : null),
      endedAtMs,
    })!;
  }
  return finishExecution(db, live.id, {
    status: "failed",
    error: String(c.error ?? "worker failure"),
    endedBy: (c.endedBy as string | undefined) ?? null,
    failure: { reason: c.reason ?? null, exit: c.exit ?? null, stderr_tail: (c.tails as { stderr?: string } | null)?.stderr ?? null },
    endedAtMs,
  })!;
}

/**
 * The worker refused the cell (it cannot be sent, or the worker died just now): the record is
 * closed as failed from the host's observation, never left running.
 */
export function refusedCompletion(id: string, startedAt: number, error: Error & { code?: string }): CellCompletion {
  return { kind: "failed", source: "host", id, startedAt, endedAt: Date.now(), endedBy: "refused", error: error.message, reason: error.code ?? "refused", exit: null, tails: null };
}

/** The caller's view of an execution row. */
export function report(row: ExecutionRow): ExecutionReport {
  return {
    id: row.id,
    session_id: row.sessionId,
    generation: row.generation,
    status: row.status,
    output: (row.output as ExecutionReport["output"]) ?? [],
    truncated_bytes: row.truncatedBytes ?? 0,
    error: row.error,
    ended_by: row.endedBy,
    failure: row.failure,
    started_at_ms: row.startedAtMs,
    ended_at_ms: row.endedAtMs,
  };
}
