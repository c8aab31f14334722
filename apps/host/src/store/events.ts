import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { events } from "../db/schema";

/** One operator-lane event row. */
export type EventRow = typeof events.$inferSelect;

/** The payload of an input or an outbound message: exactly what arrived, never a rendered frame. */
export interface EventPayload {
  text: string;
  [key: string]: unknown;
}

/** Record an input that arrived, with the attention decision it got. */
export function recordInput(
  db: HostDb,
  input: { sessionId: string; source: string; receivedAtMs: number; payload: EventPayload; attention: unknown },
): EventRow {
  return db
    .insert(events)
    .values({ ...input, lane: "operator", direction: "in" })
    .returning()
    .get();
}

/** Record a message confirmed for the operator lane (the durable half of a confirmed local send). */
export function recordOutbound(
  db: HostDb,
  message: { sessionId: string; text: string; effectId: string; atMs: number },
): EventRow {
  return db
    .insert(events)
    .values({
      sessionId: message.sessionId,
      lane: "operator",
      direction: "out",
      source: `session:${message.sessionId}`,
      receivedAtMs: message.atMs,
      payload: { text: message.text },
      effectId: message.effectId,
    })
    .returning()
    .get();
}

/** Inputs of a session that nothing has consumed yet, oldest first. */
export function pendingInputs(db: HostDb, sessionId: string): EventRow[] {
  return db
    .select()
    .from(events)
    .where(and(eq(events.sessionId, sessionId), eq(events.direction, "in"), isNull(events.consumedAtMs)))
    .orderBy(asc(events.id))
    .all();
}

/** Mark inputs as taken into account (by a wake or a boundary). */
export function markConsumed(db: HostDb, ids: number[], atMs: number): void {
  if (ids.length === 0) return;
  db.update(events).set({ consumedAtMs: atMs }).where(inArray(events.id, ids)).run();
}

/** One event by id. */
export function getEvent(db: HostDb, id: number): EventRow | undefined {
  return db.select().from(events).where(eq(events.id, id)).get();
}

/** Record the attention decision an input got (written after the hook answered). */
export function setAttention(db: HostDb, id: number, attention: unknown): void {
  db.update(events).set({ attention }).where(eq(events.id, id)).run();
}

/** When a deferred input (`attention.plan` `defer`, C8) is due, or null for any other input. */
export function deferredDueAt(row: Pick<EventRow, "attention">): number | null {
  const effective = (row.attention as { effective?: { action?: unknown; due_at_ms?: unknown } } | null)?.effective;
  return effective?.action === "defer" && typeof effective.due_at_ms === "number" ? effective.due_at_ms : null;
}

/** Inputs deferred and not taken into account yet: each still has to wake its session when due (also after a restart). */
export function openDeferredInputs(db: HostDb): EventRow[] {
  return db
    .select()
    .from(events)
    .where(and(eq(events.direction, "in"), isNull(events.consumedAtMs), sql`json_extract(${events.attention}, '$.effective.action') = 'defer'`))
    .orderBy(asc(events.id))
    .all();
}

/** Pending inputs that count now: a deferred input is not pending before its seconds pass. */
export function duePendingInputs(db: HostDb, sessionId: string, nowMs: number): EventRow[] {
  return pendingInputs(db, sessionId).filter((e) => {
    const due = deferredDueAt(e);
    return due === null || due <= nowMs;
  });
}
