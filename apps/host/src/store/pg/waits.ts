import { and, eq, isNotNull, lte, ne } from "drizzle-orm";
import { events, waits } from "../../db/pg-schema";
import type { WaitsStore } from "../api/waits";
import { newWaitValues, supersededBy, type WaitRow } from "../waits";
import type { PgContext, Q } from "./context";
import { duePending } from "./events";

const supersede = (q: Q, sessionId: string, keep: string, nowMs: number) =>
  q
    .update(waits)
    .set({ state: "superseded", wokenBy: supersededBy(keep), wokenAtMs: nowMs })
    .where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting"), ne(waits.id, keep)))
    .returning() as Promise<WaitRow[]>;

/** Waits still open on `q`. */
export const openWaitsOn = (q: Q) => q.select().from(waits).where(eq(waits.state, "waiting")) as Promise<WaitRow[]>;

/** Wake every open wait whose deadline passed, on `q`. */
export const wakeDueOn = (q: Q, nowMs: number) =>
  q.update(waits).set({ state: "woken", wokenBy: "deadline", wokenAtMs: nowMs }).where(and(eq(waits.state, "waiting"), isNotNull(waits.deadlineMs), lte(waits.deadlineMs, nowMs))).returning() as Promise<WaitRow[]>;

/** Keep the newest open wait of each session, supersede the rest, on `q` (store/waits.ts). */
export async function supersedeOlderOn(q: Q, nowMs: number): Promise<WaitRow[]> {
  const newest = new Map<string, WaitRow>();
  for (const wait of await openWaitsOn(q)) {
    const seen = newest.get(wait.sessionId);
    if (!seen || wait.createdAtMs > seen.createdAtMs || (wait.createdAtMs === seen.createdAtMs && wait.id > seen.id)) newest.set(wait.sessionId, wait);
  }
  const closed: WaitRow[] = [];
  for (const keep of newest.values()) closed.push(...(await supersede(q, keep.sessionId, keep.id, nowMs)));
  return closed;
}

/** WaitsStore over PostgreSQL. */
export function pgWaits(c: PgContext): WaitsStore {
  return {
    supersedeWaits: (sessionId, keep, nowMs) => c.write(sessionId, (tx) => supersede(tx, sessionId, keep, nowMs)),
    createWait: (wait) =>
      c.write(wait.sessionId, async (tx) => {
        // As SQLite's BEGIN IMMEDIATE: the pending check and the insert are not interleaved with another of this session's.
        await c.serialize(tx, wait.sessionId);
        const superseded = await supersede(tx, wait.sessionId, wait.id, wait.nowMs);
        const pending = (await duePending(tx, wait.sessionId, wait.nowMs)).length > 0;
        const values = newWaitValues(wait, pending);
        const [row] = (await tx
          .insert(waits)
          .values(values)
          .returning()) as WaitRow[];
        return { row: row!, reply: { wait_id: row!.id, deadline_ms: values.deadlineMs, pending_input: pending }, superseded };
      }),
    wakeWaits: (sessionId, wokenBy, nowMs) =>
      c.write(sessionId, (tx) => tx.update(waits).set({ state: "woken", wokenBy, wokenAtMs: nowMs }).where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting"))).returning() as Promise<WaitRow[]>),
    wakeForInput: (sessionId, eventId, wokenBy, nowMs) =>
      c.write(sessionId, async (tx) => {
        // Serialized with the session's takePendingInputs: an input a wake took is not woken for again.
        await c.serialize(tx, sessionId);
        const [event] = await tx.select({ consumedAtMs: events.consumedAtMs }).from(events).where(eq(events.id, eventId));
        if (!event || event.consumedAtMs !== null) return null;
        return tx.update(waits).set({ state: "woken", wokenBy, wokenAtMs: nowMs }).where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting"))).returning() as Promise<WaitRow[]>;
      }),
    wakeWait: (sessionId, id, wokenBy, nowMs) =>
      c.write(sessionId, async (tx) => (await tx.update(waits).set({ state: "woken", wokenBy, wokenAtMs: nowMs }).where(and(eq(waits.id, id), eq(waits.state, "waiting"))).returning())[0] as WaitRow | undefined),
    wakeDueWaits: (nowMs) => c.writeHost((tx) => wakeDueOn(tx, nowMs)),
    supersedeOlderOpenWaits: (nowMs) => c.writeHost((tx) => supersedeOlderOn(tx, nowMs)),
    openWaits: () => c.read((db) => openWaitsOn(db)),
    getWait: (id) => c.read(async (db) => (await db.select().from(waits).where(eq(waits.id, id)))[0] as WaitRow | undefined),
    sessionOpenWaits: (sessionId) =>
      c.read((db) => c.rows<{ id: string; reason: string; deadline_ms: number | null }>(db, "SELECT id, reason, deadline_ms FROM waits WHERE session_id = $1 AND state = 'waiting' ORDER BY created_at_ms, id", [sessionId])),
  };
}
