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

/** Record an assessment on `q` and move the item to the status it implies; the item as it is after. */
async function assessOn(q: Q, row: Parameters<WorkItemsStore["recordAssessment"]>[0]): Promise<WorkItemRow> {
  const status = row.outcome === "deferred" ? "open" : "closed";
  await q.insert(workItemAssessments).values({ ...row, status });
  return first<WorkItemRow>(await q.update(workItems).set({ status, outcome: row.outcome, closedAtMs: status === "closed" ? row.atMs : null }).where(eq(workItems.id, row.workItemId)).returning())!;
}

/** WorkItemsStore over PostgreSQL. */
export function pgWorkItems(c: PgContext): WorkItemsStore {
  return {
    insertWorkItem: (row) => c.write(row.sessionId, async (tx) => first<WorkItemRow>(await tx.insert(workItems).values({ ...row, status: "open" }).returning())!),
    getWorkItem: (id) => c.read(async (db) => first<WorkItemRow>(await db.select().from(workItems).where(eq(workItems.id, id)))),
    findWorkItemByRequest: (executionId, requestId) => c.read(async (db) => first<WorkItemRow>(await db.select().from(workItems).where(and(eq(workItems.executionId, executionId), eq(workItems.requestId, requestId))))),
    recordAssessment: (row) => c.write(row.sessionId, (tx) => assessOn(tx, row)),
    originateWorkItem: (row) =>
      c.write(row.sessionId, async (tx) => {
        // As SQLite's BEGIN IMMEDIATE: a racing retry of the same request waits here and then finds this one's item.
        await c.serialize(tx, row.sessionId);
        const existing = first<WorkItemRow>(await tx.select().from(workItems).where(and(eq(workItems.executionId, row.executionId), eq(workItems.requestId, row.requestId))));
        if (existing) return { row: existing, created: false };
        return { row: first<WorkItemRow>(await tx.insert(workItems).values({ ...row, status: "open" }).returning())!, created: true };
      }),
    assessWorkItem: (row, check) =>
      c.write(row.sessionId, async (tx) => {
        // The item's row locked: two sessions assessing it at once see each other's outcome (a closed item takes no more).
        check(first<WorkItemRow>(await tx.select().from(workItems).where(eq(workItems.id, row.workItemId)).for("update")));
        return assessOn(tx, row);
      }),
    openWorkItems: (sessionId) => c.read((db) => openWorkItemsOn(db, sessionId)),
  };
}
