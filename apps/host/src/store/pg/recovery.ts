import { and, eq, inArray, isNull } from "drizzle-orm";
import { executions, hostRequests, incidents, modelRequests } from "../../db/pg-schema";
import { finishValues } from "../executions";
import { takeover } from "../failover";
import type { RecoveryStore } from "../api/recovery";
import type { ExecutionRow } from "../executions";
import type { Recovery } from "../recovery";
import type { PgContext } from "./context";
import { finishStopOn, stoppingOn } from "./peers";
import { recoverRemoteOn } from "./remote";
import { closeUnanswered } from "./requests";
import { openWaitsOn, supersedeOlderOn, wakeDueOn } from "./waits";

/** RecoveryStore over PostgreSQL: store/recovery.ts's one transaction, statement for statement. */
export function pgRecovery(c: PgContext): RecoveryStore {
  return {
    recoverAfterCrash: (nowMs) =>
      c.writeHost(async (tx): Promise<Recovery> => {
        const interrupted: string[] = [];
        for (const row of (await tx.select().from(executions).where(eq(executions.status, "running"))) as ExecutionRow[]) {
          await tx
            .update(executions)
            .set({
              status: "interrupted",
              output: [],
              truncatedBytes: 0,
              error: "the host stopped while this cell was running; its worker and namespace are gone",
              endedBy: "host_restart",
              failure: { reason: "host_died", observed_at_ms: nowMs },
              endedAtMs: nowMs,
              cpuMs: null,
              peakRssBytes: null,
              displaysDropped: null,
            })
            .where(eq(executions.id, row.id));
          interrupted.push(row.id);
        }
        const woken = await wakeDueOn(tx, nowMs);
        const unanswered = await closeUnanswered(tx, nowMs);
        const superseded = await supersedeOlderOn(tx, nowMs);
        const stopped: string[] = [];
        for (const peer of await stoppingOn(tx)) {
          await finishStopOn(tx, peer.id, "host_restart", nowMs);
          stopped.push(peer.id);
        }
        const remote = await recoverRemoteOn(tx, nowMs);
        const remoteCut = remote.generations + remote.operations > 0;
        if (interrupted.length > 0 || woken.length > 0 || stopped.length > 0 || superseded.length > 0 || unanswered.length > 0 || remoteCut) {
          const detail = {
            interrupted,
            woken: woken.map((w) => w.id),
            ...(stopped.length > 0 ? { stopped_peers: stopped } : {}),
            ...(superseded.length > 0 ? { superseded_waits: superseded.map((w) => w.id) } : {}),
            ...(unanswered.length > 0 ? { unanswered_requests: unanswered } : {}),
            ...(remoteCut ? { remote } : {}),
          };
          await tx.insert(incidents).values({ kind: "host.recovered", detail, atMs: nowMs });
        }
        return { interrupted, woken, stopped, openWaits: await openWaitsOn(tx) };
      }),
    recoverSession: (sessionId, previous, reason, nowMs) =>
      c.writeHost(async (tx) => {
        const lost = (await tx.select({ id: executions.id }).from(executions).where(and(eq(executions.sessionId, sessionId), eq(executions.status, "running")))).map((r) => r.id).sort();
        for (const id of lost) await tx.update(executions).set(finishValues(takeover.lostCell(previous, nowMs))).where(eq(executions.id, id));
        const unanswered =
          lost.length === 0
            ? []
            : (await tx.update(hostRequests).set({ reply: takeover.unansweredReply, repliedAtMs: nowMs }).where(and(inArray(hostRequests.executionId, lost), isNull(hostRequests.repliedAtMs))).returning({ id: hostRequests.id })).map((r) => r.id).sort((a, b) => a - b);
        const requests = (await tx.update(modelRequests).set({ status: "error", error: takeover.cutRequest(reason), endedAtMs: nowMs }).where(and(eq(modelRequests.sessionId, sessionId), eq(modelRequests.status, "running"))).returning({ id: modelRequests.id })).map((r) => r.id).sort();
        const found = { lost, requests, unanswered };
        const detail = takeover.incident(sessionId, reason, previous, found);
        if (detail) await tx.insert(incidents).values({ kind: "session.taken_over", detail, atMs: nowMs });
        return found;
      }),
  };
}
