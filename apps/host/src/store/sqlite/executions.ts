import { startExecution, finishExecution, runningExecutions, getExecution } from "../executions";
import type { ExecutionsStore } from "../api/executions";
import type { SqliteContext } from "./context";

/** ExecutionsStore over the synchronous SQLite functions. */
export function sqliteExecutions(c: SqliteContext): ExecutionsStore {
  return {
    startExecution: (row) => c.write(row.sessionId, () => startExecution(c.db, row)),
    finishExecution: (sessionId, id, end) => c.write(sessionId, () => finishExecution(c.db, id, end)),
    runningExecutions: async () => runningExecutions(c.db),
    getExecution: async (id) => getExecution(c.db, id),
  };
}
