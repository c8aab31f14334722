import { recordInput, recordOutbound, pendingInputs, markConsumed, getEvent, setAttention, openDeferredInputs, duePendingInputs } from "../events";
import type { EventsStore } from "../api/events";
import type { SqliteContext } from "./context";

/** EventsStore over the synchronous SQLite functions. */
export function sqliteEvents(c: SqliteContext): EventsStore {
  return {
    recordInput: (input) => c.write(input.sessionId, () => recordInput(c.db, input)),
    recordOutbound: (message) => c.write(message.sessionId, () => recordOutbound(c.db, message)),
    pendingInputs: async (sessionId) => pendingInputs(c.db, sessionId),
    // Synchronous inside: nothing of this process runs between the read and the mark.
    takePendingInputs: (sessionId, atMs) =>
      c.write(sessionId, () => {
        const pending = pendingInputs(c.db, sessionId);
        markConsumed(c.db, pending.map((e) => e.id), atMs);
        return pending.map((e) => ({ ...e, consumedAtMs: atMs }));
      }),
    markConsumed: (sessionId, ids, atMs) => c.write(sessionId, () => markConsumed(c.db, ids, atMs)),
    getEvent: async (id) => getEvent(c.db, id),
    setAttention: (sessionId, id, attention) => c.write(sessionId, () => setAttention(c.db, id, attention)),
    openDeferredInputs: async () => openDeferredInputs(c.db),
    duePendingInputs: async (sessionId, nowMs) => duePendingInputs(c.db, sessionId, nowMs),
  };
}
