import { supersedeWaits, createWait, wakeWaits, wakeWait, wakeDueWaits, supersedeOlderOpenWaits, openWaits, getWait, sessionOpenWaits } from "../waits";
import type { WaitsStore } from "../api/waits";
import { getEvent } from "../events";
import type { SqliteContext } from "./context";

/** WaitsStore over the synchronous SQLite functions. */
export function sqliteWaits(c: SqliteContext): WaitsStore {
  return {
    supersedeWaits: (sessionId, keep, nowMs) => c.write(sessionId, () => supersedeWaits(c.db, sessionId, keep, nowMs)),
    createWait: (wait) => c.write(wait.sessionId, () => createWait(c.db, wait)),
    wakeWaits: (sessionId, wokenBy, nowMs) => c.write(sessionId, () => wakeWaits(c.db, sessionId, wokenBy, nowMs)),
    wakeForInput: (sessionId, eventId, wokenBy, nowMs) =>
      c.write(sessionId, () => {
        const event = getEvent(c.db, eventId);
        return !event || event.consumedAtMs !== null ? null : wakeWaits(c.db, sessionId, wokenBy, nowMs);
      }),
    wakeWait: (sessionId, id, wokenBy, nowMs) => c.write(sessionId, () => wakeWait(c.db, id, wokenBy, nowMs)),
    wakeDueWaits: async (nowMs) => wakeDueWaits(c.db, nowMs),
    supersedeOlderOpenWaits: async (nowMs) => supersedeOlderOpenWaits(c.db, nowMs),
    openWaits: async () => openWaits(c.db),
    getWait: async (id) => getWait(c.db, id),
    sessionOpenWaits: async (sessionId) => sessionOpenWaits(c.sqlite, sessionId),
  };
}
