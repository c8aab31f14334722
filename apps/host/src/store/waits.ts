import { and, eq, isNotNull, lte } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { waits } from "../db/schema";
import { pendingInputs } from "./events";

/** One wait row. */
export type WaitRow = typeof waits.$inferSelect;

/** The runtime.wait ok value (C8). */
export interface WaitReply {
  wait_id: string;
  deadline_ms: number | null;
  pending_input: boolean;
}

/**
 * Record a durable wait. The deadline and the check for already-pending input happen in one
 * immediate transaction, so an input that lands between "check" and "record" cannot be missed:
 * either it is seen as pending here, or it arrives after the wait exists and wakes it.
 */
export function createWait(
  db: HostDb,
  wait: { id: string; sessionId: string; executionId: string; reason: string; seconds: number | null; nowMs: number },
): { row: WaitRow; reply: WaitReply } {
  return db.transaction(
    (tx) => {
      const pending = pendingInputs(tx as unknown as HostDb, wait.sessionId).length > 0;
      const deadlineMs = wait.seconds === null ? null : wait.nowMs + Math.round(wait.seconds * 1000);
      const row = tx
        .insert(waits)
        .values({
          id: wait.id,
          sessionId: wait.sessionId,
          executionId: wait.executionId,
          reason: wait.reason,
          seconds: wait.seconds,
          deadlineMs,
          pendingInput: pending,
          state: pending ? "woken" : "waiting",
          wokenBy: pending ? "pending_input" : null,
          wokenAtMs: pending ? wait.nowMs : null,
          createdAtMs: wait.nowMs,
        })
        .returning()
        .get();
      return { row, reply: { wait_id: row.id, deadline_ms: deadlineMs, pending_input: pending } };
    },
    { behavior: "immediate" },
  );
}

/** Wake a session's open waits (an input arrived, or a deadline passed); returns the rows woken. */
export function wakeWaits(db: HostDb, sessionId: string, wokenBy: string, nowMs: number): WaitRow[] {
  return db
    .update(waits)
    .set({ state: "woken", wokenBy, wokenAtMs: nowMs })
    .where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting")))
    .returning()
    .all();
}

/** Wake one wait if it is still open (its own deadline passed); returns the row if it was woken now. */
export function wakeWait(db: HostDb, id: string, wokenBy: string, nowMs: number): WaitRow | undefined {
  return db
    .update(waits)
    .set({ state: "woken", wokenBy, wokenAtMs: nowMs })
    .where(and(eq(waits.id, id), eq(waits.state, "waiting")))
    .returning()
    .get();
}

/** Wake every open wait whose deadline has passed; returns the rows woken. */
export function wakeDueWaits(db: HostDb, nowMs: number): WaitRow[] {
  return db
    .update(waits)
    .set({ state: "woken", wokenBy: "deadline", wokenAtMs: nowMs })
    .where(and(eq(waits.state, "waiting"), isNotNull(waits.deadlineMs), lte(waits.deadlineMs, nowMs)))
    .returning()
    .all();
}

/** Waits still open, for timers after a restart. */
export function openWaits(db: HostDb): WaitRow[] {
  return db.select().from(waits).where(eq(waits.state, "waiting")).all();
}

/** One wait by id. */
export function getWait(db: HostDb, id: string): WaitRow | undefined {
  return db.select().from(waits).where(eq(waits.id, id)).get();
}

