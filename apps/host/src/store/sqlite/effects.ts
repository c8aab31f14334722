import { findEffect, insertEffect, getEffect, recordSend } from "../effects";
import type { EffectsStore } from "../api/effects";
import type { SqliteContext } from "./context";

/** EffectsStore over the synchronous SQLite functions. */
export function sqliteEffects(c: SqliteContext): EffectsStore {
  return {
    findEffect: async (executionId, requestId) => findEffect(c.db, executionId, requestId),
    insertEffect: (row) => c.write(row.sessionId, () => insertEffect(c.db, row)),
    getEffect: async (id) => getEffect(c.db, id),
    recordSend: (row, outbound, check) => c.write(row.sessionId, () => recordSend(c.db, row, outbound, check)),
  };
}
