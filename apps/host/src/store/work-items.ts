import { and, asc, eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { workItemAssessments, workItems } from "../db/schema";

/** One work item row. */
export type WorkItemRow = typeof workItems.$inferSelect;

/** An assessment outcome (C11): `deferred` keeps the item open, the others close it. */
export type Outcome = (typeof workItemAssessments.$inferSelect)["outcome"];

/** The outcomes C11 names, in its order. */
export const OUTCOMES: readonly Outcome[] = ["no-change", "changed", "abandoned", "deferred"];

/** Insert a work item (open). */
export function insertWorkItem(db: HostDb, row: Omit<typeof workItems.$inferInsert, "status" | "outcome" | "closedAtMs">): WorkItemRow {
  return db.insert(workItems).values({ ...row, status: "open" }).returning().get();
}

/** One work item by id. */
export function getWorkItem(db: HostDb, id: string): WorkItemRow | undefined {
  return db.select().from(workItems).where(eq(workItems.id, id)).get();
}

/** The work item one request already made (a retry of the same identity), if any. */
export function findWorkItemByRequest(db: HostDb, executionId: string, requestId: string): WorkItemRow | undefined {
  return db.select().from(workItems).where(and(eq(workItems.executionId, executionId), eq(workItems.requestId, requestId))).get();
}

/** Record an assessment and move the item to the status it implies; returns the item as it is now. */
export function recordAssessment(
  db: HostDb,
  row: { workItemId: string; sessionId: string; executionId: string; requestId: string; outcome: Outcome; atMs: number },
): WorkItemRow {
  const status = row.outcome === "deferred" ? "open" : "closed";
  db.insert(workItemAssessments).values({ ...row, status }).run();
  return db
    .update(workItems)
    .set({ status, outcome: row.outcome, closedAtMs: status === "closed" ? row.atMs : null })
    .where(eq(workItems.id, row.workItemId))
    .returning()
    .get();
}

/** See WorkItemsStore.originateWorkItem: one immediate transaction. */
export function originateWorkItem(db: HostDb, row: Omit<typeof workItems.$inferInsert, "status" | "outcome" | "closedAtMs">): { row: WorkItemRow; created: boolean } {
  return db.transaction(
    (tx) => {
      const existing = findWorkItemByRequest(tx as never, row.executionId, row.requestId);
      return existing ? { row: existing, created: false } : { row: insertWorkItem(tx as never, row), created: true };
    },
    { behavior: "immediate" },
  );
}

/** See WorkItemsStore.assessWorkItem: one immediate transaction. */
export function assessWorkItem(db: HostDb, row: Parameters<typeof recordAssessment>[1], check: (item: WorkItemRow | undefined) => void): WorkItemRow {
  return db.transaction(
    (tx) => {
      check(getWorkItem(tx as never, row.workItemId));
      return recordAssessment(tx as never, row);
    },
    { behavior: "immediate" },
  );
}

/** Open work items, oldest first; of one session when `sessionId` is given. */
export function openWorkItems(db: HostDb, sessionId?: string): WorkItemRow[] {
  const open = eq(workItems.status, "open");
  return db
    .select()
    .from(workItems)
    .where(sessionId === undefined ? open : and(open, eq(workItems.sessionId, sessionId)))
    .orderBy(asc(workItems.createdAtMs), asc(workItems.id))
    .all();
}

/** A work item as evidence, logs and status show it. */
export function workItemView(row: WorkItemRow): Record<string, unknown> {
  return {
    work_item_id: row.id,
    status: row.status,
    outcome: row.outcome,
    purpose: row.purpose,
    reason: row.reason,
    evidence_refs: row.evidenceRefs,
    session_id: row.sessionId,
    execution_id: row.executionId,
    request_id: row.requestId,
    created_at_ms: row.createdAtMs,
    closed_at_ms: row.closedAtMs,
  };
}
