import { eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { executions } from "../db/schema";

/** One execution row. */
export type ExecutionRow = typeof executions.$inferSelect;
/** Terminal statuses an execution can be closed with. */
export type ExecutionStatus = Exclude<ExecutionRow["status"], "running">;

/** Open an execution record before the cell is sent, so a crash mid-cell leaves evidence. */
export function startExecution(
  db: HostDb,
  row: { id: string; sessionId: string; generation: string; code: string; startedAtMs: number },
): ExecutionRow {
  return db
    .insert(executions)
    .values({ ...row, status: "running" })
    .returning()
    .get();
}

/** Close an execution with what the worker (or the host's own observation) reported. */
export function finishExecution(
  db: HostDb,
  id: string,
  end: {
    status: ExecutionStatus;
    output?: unknown;
    truncatedBytes?: number | null;
    error?: string | null;
    endedBy?: string | null;
    failure?: unknown;
    endedAtMs: number;
  },
): ExecutionRow | undefined {
  return db
    .update(executions)
    .set({
      status: end.status,
      output: end.output ?? [],
      truncatedBytes: end.truncatedBytes ?? 0,
      error: end.error ?? null,
      endedBy: end.endedBy ?? null,
      failure: end.failure ?? null,
      endedAtMs: end.endedAtMs,
    })
    .where(eq(executions.id, id))
    .returning()
    .get();
}

/** Executions still marked running (after a crash these were cut short). */
export function runningExecutions(db: HostDb): ExecutionRow[] {
  return db.select().from(executions).where(eq(executions.status, "running")).all();
}

/** One execution by id. */
export function getExecution(db: HostDb, id: string): ExecutionRow | undefined {
  return db.select().from(executions).where(eq(executions.id, id)).get();
}
