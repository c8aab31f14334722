import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import { events } from "../../db/pg-schema";
import type { EventsStore } from "../api/events";
import { deferredDueAt, type EventRow } from "../events";
import type { PgContext, Q } from "./context";

const pending = (q: Q, sessionId: string) =>
  q.select().from(events).where(and(eq(events.sessionId, sessionId), eq(events.direction, "in"), isNull(events.consumedAtMs))).orderBy(asc(events.id)) as Promise<EventRow[]>;

/** Inputs of a session that count at `nowMs` (a deferred input not before its seconds pass), on `q`. */
export async function duePending(q: Q, sessionId: string, nowMs: number): Promise<EventRow[]> {
  return (await pending(q, sessionId)).filter((e) => {
    const due = deferredDueAt(e);
    return due === null || due <= nowMs;
  });
}

/** EventsStore over PostgreSQL. */
export function pgEvents(c: PgContext): EventsStore {
  return {
    recordInput: (input) => c.write(input.sessionId, async (tx) => (await tx.insert(events).values({ ...input, lane: "operator", direction: "in" }).returning())[0] as EventRow),
    recordOutbound: (m) =>
      c.write(m.sessionId, async (tx) =>
        (await tx.insert(events).values({ sessionId: m.sessionId, lane: "operator", direction: "out", source: `session:${m.sessionId}`, receivedAtMs: m.atMs, payload: { text: m.text }, effectId: m.effectId }).returning())[0] as EventRow,
      ),
    pendingInputs: (sessionId) => c.read((db) => pending(db, sessionId)),
    takePendingInputs: (sessionId, atMs) =>
      c.write(sessionId, async (tx) => {
        // One at a time per session with a deferred input's wake (waits.ts wakeForInput), as SQLite's write lock makes them.
        await c.serialize(tx, sessionId);
        const taken = (await tx
          .update(events)
          .set({ consumedAtMs: atMs })
          .where(and(eq(events.sessionId, sessionId), eq(events.direction, "in"), isNull(events.consumedAtMs)))
          .returning()) as EventRow[];
        // RETURNING promises no order.
        return taken.sort((a, b) => a.id - b.id);
      }),
    markConsumed: async (sessionId, ids, atMs) => {
      if (ids.length === 0) return;
      await c.write(sessionId, (tx) => tx.update(events).set({ consumedAtMs: atMs }).where(inArray(events.id, ids)));
    },
    getEvent: (id) => c.read(async (db) => (await db.select().from(events).where(eq(events.id, id)))[0] as EventRow | undefined),
    setAttention: (sessionId, id, attention) => c.write(sessionId, async (tx) => void (await tx.update(events).set({ attention }).where(eq(events.id, id)))),
    openDeferredInputs: () =>
      c.read((db) => db.select().from(events).where(and(eq(events.direction, "in"), isNull(events.consumedAtMs), sql`${events.attention}->'effective'->>'action' = 'defer'`)).orderBy(asc(events.id)) as Promise<EventRow[]>),
    duePendingInputs: (sessionId, nowMs) => c.read((db) => duePending(db, sessionId, nowMs)),
  };
}
