import type Database from "better-sqlite3";
import { and, eq, isNotNull, lte, ne } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { waits } from "../db/schema";
import { duePendingInputs } from "./events";

/** One wait row. */
export type WaitRow = typeof waits.$inferSelect;

/** The runtime.wait ok value (C8). */
export interface WaitReply {
  wait_id: string;
  deadline_ms: number | null;
  pending_input: boolean;
}

/** How a wait closed by a newer wait of its session records it (C8): `woken_by` names the newer wait. */
export function supersededBy(waitId: string): string {
  return `superseded:${waitId}`;
}

/** Close every open wait of a session except `keep` as superseded by it; returns the rows closed. */
export function supersedeWaits(db: HostDb, sessionId: string, keep: string, nowMs: number): WaitRow[] {
  return db
    .update(waits)
    .set({ state: "superseded", wokenBy: supersededBy(keep), wokenAtMs: nowMs })
    .where(and(eq(waits.sessionId, sessionId), eq(waits.state, "waiting"), ne(waits.id, keep)))
    .returning()
    .all();
}

/** A new wait's row: woken at once when input is already pending, else waiting until its deadline (both dialects insert this). */
export function newWaitValues(wait: { id: string; sessionId: string; executionId: string; reason: string; seconds: number | null; nowMs: number }, pending: boolean) {
  return {
    id: wait.id,
    sessionId: wait.sessionId,
    executionId: wait.executionId,
    reason: wait.reason,
    seconds: wait.seconds,
    deadlineMs: wait.seconds === null ? null : wait.nowMs + Math.round(wait.seconds * 1000),
    pendingInput: pending,
    state: pending ? ("woken" as const) : ("waiting" as const),
    wokenBy: pending ? "pending_input" : null,
    wokenAtMs: pending ? wait.nowMs : null,
    createdAtMs: wait.nowMs,
  };
}

/**
 * Record a durable wait. The deadline and the check for already-pending input happen in one
 * immediate transaction, so an input that lands between "check" and "record" cannot be missed:
 * either it is seen as pending here, or it arrives after the wait exists and wakes it. A session
 * has at most one open wait (C8): the same transaction closes its older open waits as superseded,
 * so one input later wakes one wait, not a pile of them.
 */
export function createWait(
  db: HostDb,
  wait: { id: string; sessionId: string; executionId: string; reason: string; seconds: number | null; nowMs: number },
): { row: WaitRow; reply: WaitReply; superseded: WaitRow[] } {
  return db.transaction(
    (tx) => {
      const superseded = supersedeWaits(tx as unknown as HostDb, wait.sessionId, wait.id, wait.nowMs);
      // A deferred input is not pending before its seconds pass: it wakes the session then (C8).
      const pending = duePendingInputs(tx as unknown as HostDb, wait.sessionId, wait.nowMs).length > 0;
      const values = newWaitValues(wait, pending);
      const row = tx
        .insert(waits)
        .values(values)
        .returning()
        .get();
      return { row, reply: { wait_id: row.id, deadline_ms: values.deadlineMs, pending_input: pending }, superseded };
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

/**
 * A log written before waits were superseded may hold several open waits per session: keep the
 * newest of each session open and close the rest as superseded by it (run at recovery).
 */
export function supersedeOlderOpenWaits(db: HostDb, nowMs: number): WaitRow[] {
  const newest = new Map<string, WaitRow>();
  for (const wait of openWaits(db)) {
    const seen = newest.get(wait.sessionId);
    if (!seen || wait.createdAtMs > seen.createdAtMs || (wait.createdAtMs === seen.createdAtMs && wait.id > seen.id)) newest.set(wait.sessionId, wait);
  }
  return [...newest.values()].flatMap((keep) => supersedeWaits(db, keep.sessionId, keep.id, nowMs));
}

/** Waits still open, for timers after a restart. */
export function openWaits(db: HostDb): WaitRow[] {
  return db.select().from(waits).where(eq(waits.state, "waiting")).all();
}

/** One wait by id. */
export function getWait(db: HostDb, id: string): WaitRow | undefined {
  return db.select().from(waits).where(eq(waits.id, id)).get();
}


/** The session's open waits, oldest first (raw columns, for the frontier block). */
export function sessionOpenWaits(sqlite: Database.Database, sessionId: string): Array<{ id: string; reason: string; deadline_ms: number | null }> {
  return sqlite.prepare("SELECT id, reason, deadline_ms FROM waits WHERE session_id = ? AND state = 'waiting' ORDER BY created_at_ms, id").all(sessionId) as Array<{ id: string; reason: string; deadline_ms: number | null }>;
}
