import type { workItems } from "../../db/schema";
import type { WorkItemRow, Outcome } from "../work-items";

/** WorkItems records (store/work-items.ts). */
export interface WorkItemsStore {
  /** Insert a work item (open). */
  insertWorkItem(row: Omit<typeof workItems.$inferInsert, "status" | "outcome" | "closedAtMs">): Promise<WorkItemRow>;
  /** One work item by id. */
  getWorkItem(id: string): Promise<WorkItemRow | undefined>;
  /** The work item one request already made (a retry of the same identity), if any. */
  findWorkItemByRequest(executionId: string, requestId: string): Promise<WorkItemRow | undefined>;
  /** Record an assessment and move the item to the status it implies; returns the item as it is now. */
  recordAssessment(row: { workItemId: string; sessionId: string; executionId: string; requestId: string; outcome: Outcome; atMs: number }): Promise<WorkItemRow>;
  /** Insert a work item in one transaction of its session unless its request identity already made one: then that one, `created` false. */
  originateWorkItem(row: Omit<typeof workItems.$inferInsert, "status" | "outcome" | "closedAtMs">): Promise<{ row: WorkItemRow; created: boolean }>;
  /**
   * Read the item and record an assessment of it in one transaction of the assessing session:
   * `check(item)` sees the item as it is there (undefined when there is none) and throws to refuse
   * (nothing is written). Returns the item as it is after.
   */
  assessWorkItem(row: { workItemId: string; sessionId: string; executionId: string; requestId: string; outcome: Outcome; atMs: number }, check: (item: WorkItemRow | undefined) => void): Promise<WorkItemRow>;
  /** Open work items, oldest first; of one session when `sessionId` is given. */
  openWorkItems(sessionId?: string): Promise<WorkItemRow[]>;
}
