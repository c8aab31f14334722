import { eq } from "drizzle-orm";
import { executions } from "../../db/pg-schema";
import type { ExecutionsStore } from "../api/executions";
import { finishValues, type ExecutionRow } from "../executions";
import type { PgContext } from "./context";

/** ExecutionsStore over PostgreSQL. */
export function pgExecutions(c: PgContext): ExecutionsStore {
  return {
    startExecution: (row) => c.write(row.sessionId, async (tx) => (await tx.insert(executions).values({ ...row, origin: row.origin ?? null, status: "running" }).returning())[0] as ExecutionRow),
    finishExecution: (sessionId, id, end) =>
      c.write(sessionId, async (tx) =>
        (
          await tx
            .update(executions)
            .set(finishValues(end))
            .where(eq(executions.id, id))
            .returning()
        )[0] as ExecutionRow | undefined,
      ),
    runningExecutions: () => c.read((db) => db.select().from(executions).where(eq(executions.status, "running")) as Promise<ExecutionRow[]>),
    getExecution: (id) => c.read(async (db) => (await db.select().from(executions).where(eq(executions.id, id)))[0] as ExecutionRow | undefined),
  };
}
