import { and, asc, eq, gt, lte, or } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { hostRequests, modelRequests, peerRequests, transcriptRecords } from "../db/schema";
import type { ModelRequestRow } from "./model-requests";

/** One model request row by id. */
export function modelRequestById(db: HostDb, id: string): ModelRequestRow | undefined {
  return db.select().from(modelRequests).where(eq(modelRequests.id, id)).get();
}

/** The tool call id the model gave a cell (null for a fenced cell, or a cell no model asked for). */
export function callIdOfCell(db: HostDb, executionId: string): string | null {
  const row = db
    .select({ callId: transcriptRecords.callId })
    .from(transcriptRecords)
    .where(and(eq(transcriptRecords.kind, "cell"), eq(transcriptRecords.ref, executionId)))
    .get();
  return row?.callId ?? null;
}

/** Every host request an execution made, with its reply, in the order they were made. */
export function hostRequestsOf(db: HostDb, executionId: string): Array<typeof hostRequests.$inferSelect> {
  return db.select().from(hostRequests).where(eq(hostRequests.executionId, executionId)).orderBy(asc(hostRequests.id)).all();
}

/**
 * The cells whose peer traffic reached a session in (sinceMs, untilMs]: requests sent to it, and
 * answers to the requests it sent. A turn then is (in part) their consequence.
 */
export function peerCausesOf(db: HostDb, sessionId: string, sinceMs: number, untilMs: number): string[] {
  const rows = db
    .select({ to: peerRequests.toSessionId, sentBy: peerRequests.sentByExecutionId, answeredBy: peerRequests.answeredByExecutionId, sentAt: peerRequests.sentAtMs, answeredAt: peerRequests.answeredAtMs })
    .from(peerRequests)
    .where(
      or(
        and(eq(peerRequests.toSessionId, sessionId), gt(peerRequests.sentAtMs, sinceMs), lte(peerRequests.sentAtMs, untilMs)),
        and(eq(peerRequests.fromSessionId, sessionId), gt(peerRequests.answeredAtMs, sinceMs), lte(peerRequests.answeredAtMs, untilMs)),
      ),
    )
    .orderBy(asc(peerRequests.id))
    .all();
  const causes: string[] = [];
  for (const r of rows) {
    if (r.to === sessionId && r.sentAt > sinceMs && r.sentAt <= untilMs) causes.push(r.sentBy);
    else if (r.answeredBy) causes.push(r.answeredBy);
  }
  return causes;
}
