import { insertWorkItem, getWorkItem, findWorkItemByRequest, recordAssessment, openWorkItems, originateWorkItem, assessWorkItem } from "../work-items";
import type { WorkItemsStore } from "../api/work-items";
import type { SqliteContext } from "./context";

/** WorkItemsStore over the synchronous SQLite functions. */
export function sqliteWorkItems(c: SqliteContext): WorkItemsStore {
  return {
    insertWorkItem: (row) => c.write(row.sessionId, () => insertWorkItem(c.db, row)),
    getWorkItem: async (id) => getWorkItem(c.db, id),
    findWorkItemByRequest: async (executionId, requestId) => findWorkItemByRequest(c.db, executionId, requestId),
    recordAssessment: (row) => c.write(row.sessionId, () => recordAssessment(c.db, row)),
    originateWorkItem: (row) => c.write(row.sessionId, () => originateWorkItem(c.db, row)),
    assessWorkItem: (row, check) => c.write(row.sessionId, () => assessWorkItem(c.db, row, check)),
    openWorkItems: async (sessionId) => openWorkItems(c.db, sessionId),
  };
}
