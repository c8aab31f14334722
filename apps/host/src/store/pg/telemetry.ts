import { and, asc, eq, gt, lte, or } from "drizzle-orm";
import { hostRequests, modelRequests, peerRequests, transcriptRecords } from "../../db/pg-schema";
import type { TelemetryStore } from "../api/telemetry";
import type { ModelRequestRow } from "../model-requests";
import type { PgContext } from "./context";

/** TelemetryStore over PostgreSQL. */
export function pgTelemetry(c: PgContext): TelemetryStore {
  return {
    modelRequestById: (id) => c.read(async (db) => (await db.select().from(modelRequests).where(eq(modelRequests.id, id)))[0] as ModelRequestRow | undefined),
    callIdOfCell: (executionId) =>
      c.read(async (db) => (await db.select({ callId: transcriptRecords.callId }).from(transcriptRecords).where(and(eq(transcriptRecords.kind, "cell"), eq(transcriptRecords.ref, executionId))).limit(1))[0]?.callId ?? null),
    hostRequestsOf: (executionId) => c.read((db) => db.select().from(hostRequests).where(eq(hostRequests.executionId, executionId)).orderBy(asc(hostRequests.id))),
    peerCausesOf: (sessionId, sinceMs, untilMs) =>
      c.read(async (db) => {
        const rows = await db
          .select({ to: peerRequests.toSessionId, sentBy: peerRequests.sentByExecutionId, answeredBy: peerRequests.answeredByExecutionId, sentAt: peerRequests.sentAtMs })
          .from(peerRequests)
          .where(
            or(
              and(eq(peerRequests.toSessionId, sessionId), gt(peerRequests.sentAtMs, sinceMs), lte(peerRequests.sentAtMs, untilMs)),
              and(eq(peerRequests.fromSessionId, sessionId), gt(peerRequests.answeredAtMs, sinceMs), lte(peerRequests.answeredAtMs, untilMs)),
            ),
          )
          .orderBy(asc(peerRequests.id));
        const causes: string[] = [];
        for (const r of rows) {
          if (r.to === sessionId && r.sentAt > sinceMs && r.sentAt <= untilMs) causes.push(r.sentBy);
          else if (r.answeredBy) causes.push(r.answeredBy);
        }
        return causes;
      }),
  };
}
