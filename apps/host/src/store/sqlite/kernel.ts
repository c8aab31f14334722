import { recordKernelReset, lastKernelReset } from "../kernel";
import type { KernelStore } from "../api/kernel";
import type { SqliteContext } from "./context";

/** KernelStore over the synchronous SQLite functions. */
export function sqliteKernel(c: SqliteContext): KernelStore {
  return {
    recordKernelReset: (row) => c.write(row.sessionId, () => recordKernelReset(c.db, row)),
    lastKernelReset: async (sessionId) => lastKernelReset(c.db, sessionId),
  };
}
