import { and, count, eq, isNull, lte } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { hostRequests } from "../db/schema";

/** Record a host request as it arrives. */
export function recordRequest(
  db: HostDb,
  row: { executionId: string; requestId: string; method: string; request: unknown; requestedAtMs: number },
): number {
  return db.insert(hostRequests).values(row).returning({ id: hostRequests.id }).get().id;
}

/** Record the reply a request got. */
export function recordReply(db: HostDb, id: number, reply: unknown, repliedAtMs: number): void {
  db.update(hostRequests).set({ reply, repliedAtMs }).where(eq(hostRequests.id, id)).run();
}

/** A request's 1-based index among the requests its execution made (its row and those before it). */
export function requestStep(db: HostDb, executionId: string, rowId: number): number {
  return db
    .select({ n: count() })
    .from(hostRequests)
    .where(and(eq(hostRequests.executionId, executionId), lte(hostRequests.id, rowId)))
    .get()!.n;
}

/**
 * After a crash: every request still without a reply was cut short with its host, so none of them
 * was answered; each gets the `host_restart` reply (C8). Returns the row ids closed.
 */
export function closeUnansweredRequests(db: HostDb, nowMs: number): number[] {
  return db
    .update(hostRequests)
    .set({
      reply: { kind: "error", code: "host_restart", message: "the host stopped before this request was answered; no reply reached the cell", sent: false },
      repliedAtMs: nowMs,
    })
    .where(isNull(hostRequests.repliedAtMs))
    .returning({ id: hostRequests.id })
    .all()
    .map((r) => r.id);
}
