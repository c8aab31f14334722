import type { CellCompletion } from "@klbr/supervisor";
import type { Store } from "../store/api";
import type { LiveExecution } from "./live-execution";
import { displaysOf, type DisplayRef } from "../store/displays";
import type { ExecutionRow, ExecutionStatus } from "../store/executions";

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
  /** Who ran it ("exec", "model", "mcp", "web", ...); null on rows older than C20. */
  origin: string | null;
  /** The cell's rich displays in order (C20), stored: fetch a bundle or an image by digest (`blob_get`). */
  displays: DisplayRef[];
  /** Displays the cell could not show (past 32). */
  displays_dropped: number;
}

/** Close the execution row from the completion: a yield the host never accepted is not a yield, and one it accepted is. */
export async function recordCompletion(store: Pick<Store, "finishExecution">, live: LiveExecution, completion: CellCompletion, endedAtMs: number, displaysDropped = 0): Promise<ExecutionRow> {
  const c = completion as CellCompletion & Record<string, unknown>;
  if (c.kind === "cell") {
    let status = c.status as ExecutionStatus;
    let error = (c.error as string | null) ?? null;
    // The host's acceptance decides (C8 amended): a cell whose wait it accepted is yielded whatever
    // the worker reports (catching WaitYield and clearing the worker's flag cannot un-yield it).
    if (live.yielded) status = "yielded";
    else if (status === "yielded") {
      status = "error";
      error = "the worker reported a yield the host never accepted";
    }
    return (await store.finishExecution(live.sessionId, live.id, {
      status,
      output: c.output,
      truncatedBytes: c.truncated_bytes as number,
      error,
      endedBy: (c.endedBy as string | undefined) ?? (status === "interrupted" ? "message" : null),
      endedAtMs,
      displaysDropped,
      ...costOf(completion),
    }))!;
  }
  return (await store.finishExecution(live.sessionId, live.id, {
    status: "failed",
    error: String(c.error ?? "worker failure"),
    endedBy: (c.endedBy as string | undefined) ?? null,
    failure: { reason: c.reason ?? null, exit: c.exit ?? null, stderr_tail: (c.tails as { stderr?: string } | null)?.stderr ?? null },
    endedAtMs,
    displaysDropped,
    ...costOf(completion),
  }))!;
}

/** What the cell cost (C17): the operator's log has it, the model's result frame does not. */
function costOf(completion: CellCompletion): { cpuMs: number | null; peakRssBytes: number | null } {
  return { cpuMs: completion.usage?.cpuMs ?? null, peakRssBytes: completion.usage?.peakRssBytes ?? null };
}

/** The resource limit a failed cell's record names (C17), which is then the next generation's reset reason. */
export function limitReason(failure: unknown): string | null {
  const reason = (failure as { reason?: unknown } | null)?.reason;
  return reason === "memory_limit" || reason === "cpu_limit" || reason === "procs_limit" ? reason : null;
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
    origin: row.origin ?? null,
    displays: displaysOf(row),
    displays_dropped: row.displaysDropped ?? 0,
  };
}
