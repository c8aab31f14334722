import { and, asc, eq } from "drizzle-orm";
import { workItemAssessments, workItems } from "../../db/pg-schema";
import type { WorkItemsStore } from "../api/work-items";
import type { WorkItemRow } from "../work-items";
import type { PgContext, Q } from "./context";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

/** Open work items on `q`, oldest first; of one session when given. */
export function openWorkItemsOn(q: Q, sessionId?: string): Promise<WorkItemRow[]> {
  const open = eq(workItems.status, "open");
  return q.select().from(workItems).where(sessionId === undefined ? open : and(open, eq(workItems.sessionId, sessionId))).orderBy(asc(workItems.createdAtMs), asc(workItems.id)) as Promise<WorkItemRow[]>;
}

/** WorkItemsStore over PostgreSQL. */
export function pgWorkItems(c: PgContext): WorkItemsStore {
  return {
    insertWorkItem: (row) => c.write(row.sessionId, async (tx) => first<WorkItemRow>(await tx.insert(workItems).values({ ...row, status: "open" }).returning())!),
    getWorkItem: (id) => c.read(async (db) => first<WorkItemRow>(await db.select().from(workItems).where(eq(workItems.id, id)))),
    findWorkItemByRequest: (executionId, requestId) => c.read(async (db) => first<WorkItemRow>(await db.select().from(workItems).where(and(eq(workItems.executionId, executionId), eq(workItems.requestId, requestId))))),
    recordAssessment: (row) =>
      c.write(row.sessionId, async (tx) => {
        const status = row.outcome === "deferred" ? "open" : "closed";
        await tx.insert(workItemAssessments).values({ ...row, status });
        return first<WorkItemRow>(await tx.update(workItems).set({ status, outcome: row.outcome, closedAtMs: status === "closed" ? row.atMs : null }).where(eq(workItems.id, row.workItemId)).returning())!;
      }),
    openWorkItems: (sessionId) => c.read((db) => openWorkItemsOn(db, sessionId)),
  };
}
