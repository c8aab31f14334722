import { eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { placeholder, preparedPerConnection } from "./prepared";
import { executions } from "../db/schema";

/** One execution row. */
export type ExecutionRow = typeof executions.$inferSelect;
/** Terminal statuses an execution can be closed with. */
export type ExecutionStatus = Exclude<ExecutionRow["status"], "running">;

// The two statements every cell runs are prepared once per connection: building a query through
// drizzle on each call cost about a fifth of the host's CPU per cell.
function prepare(db: HostDb) {
  const p = placeholder;
  return {
    start: db
      .insert(executions)
      .values({ id: p("id"), sessionId: p("sessionId"), generation: p("generation"), code: p("code"), status: "running", startedAtMs: p("startedAtMs"), origin: p("origin") })
      .returning()
      .prepare(),
    finish: db
      .update(executions)
      .set({
        status: p("status"),
        output: p("output"),
        truncatedBytes: p("truncatedBytes"),
        error: p("error"),
        endedBy: p("endedBy"),
        failure: p("failure"),
        endedAtMs: p("endedAtMs"),
        cpuMs: p("cpuMs"),
        peakRssBytes: p("peakRssBytes"),
        displaysDropped: p("displaysDropped"),
      })
      .where(eq(executions.id, p("id")))
      .returning()
      .prepare(),
    // Every cell a model step runs under its own id is looked up first (is the id free?).
    byId: db.select().from(executions).where(eq(executions.id, p("id"))).prepare(),
  };
}

const statements = preparedPerConnection(prepare);

/** Open an execution record before the cell is sent, so a crash mid-cell leaves evidence. */
export function startExecution(
  db: HostDb,
  row: { id: string; sessionId: string; generation: string; code: string; startedAtMs: number; origin?: string | null },
): ExecutionRow {
  return statements(db).start.get({ ...row, origin: row.origin ?? null }) as ExecutionRow;
}

/** What closes an execution: the status and what the worker (or the host) observed. */
export type ExecutionEnd = {
  status: ExecutionStatus;
  output?: unknown;
  truncatedBytes?: number | null;
  error?: string | null;
  endedBy?: string | null;
  failure?: unknown;
  endedAtMs: number;
  /** What the cell cost (C17): null where not measured. */
  cpuMs?: number | null;
  peakRssBytes?: number | null;
  /** C20: displays the cell could not show; null where the cell never ran under a display-capable record. */
  displaysDropped?: number | null;
};

/** The columns a close writes, absent observations as their stored defaults (both dialects write these). */
export function finishValues(end: ExecutionEnd) {
  return {
    status: end.status,
    output: end.output ?? [],
    truncatedBytes: end.truncatedBytes ?? 0,
    error: end.error ?? null,
    endedBy: end.endedBy ?? null,
    failure: end.failure ?? null,
    endedAtMs: end.endedAtMs,
    cpuMs: end.cpuMs ?? null,
    peakRssBytes: end.peakRssBytes ?? null,
    displaysDropped: end.displaysDropped ?? null,
  };
}

/** Close an execution with what the worker (or the host's own observation) reported. */
export function finishExecution(
  db: HostDb,
  id: string,
  end: ExecutionEnd,
): ExecutionRow | undefined {
  return statements(db).finish.get({ id, ...finishValues(end) }) as ExecutionRow | undefined;
}

/** Executions still marked running (after a crash these were cut short). */
export function runningExecutions(db: HostDb): ExecutionRow[] {
  return db.select().from(executions).where(eq(executions.status, "running")).all();
}

/** One execution by id. */
export function getExecution(db: HostDb, id: string): ExecutionRow | undefined {
  return statements(db).byId.get({ id }) as ExecutionRow | undefined;
}
