import { readLog, followLog } from "../log-view";
import type { LogViewStore } from "../api/log-view";
import type { SqliteContext } from "./context";

/** LogViewStore over the synchronous SQLite functions. */
export function sqliteLogView(c: Pick<SqliteContext, "sqlite">): LogViewStore {
  return {
    readLog: async () => readLog(c.sqlite),
    followLog: async () => {
      const follower = followLog(c.sqlite);
      return {
        poll: async () => follower.poll(),
        get rowsRead() {
          return follower.rowsRead;
        },
      };
    },
  };
}
