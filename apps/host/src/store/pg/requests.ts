import { and, count, eq, isNull, lte } from "drizzle-orm";
import { hostRequests } from "../../db/pg-schema";
import type { RequestsStore } from "../api/requests";
import type { PgContext, Q } from "./context";

/** The reply every request a crash left unanswered gets (C8), as store/requests.ts writes it. */
const HOST_RESTART_REPLY = { kind: "error", code: "host_restart", message: "the host stopped before this request was answered; no reply reached the cell", sent: false };

/** Close every unanswered request on `q` (recovery's transaction); the ids closed. */
export async function closeUnanswered(q: Q, nowMs: number): Promise<number[]> {
  const rows = await q.update(hostRequests).set({ reply: HOST_RESTART_REPLY, repliedAtMs: nowMs }).where(isNull(hostRequests.repliedAtMs)).returning({ id: hostRequests.id });
  return rows.map((r) => r.id);
}

/** RequestsStore over PostgreSQL. */
export function pgRequests(c: PgContext): RequestsStore {
  return {
    recordRequest: (sessionId, row) => c.write(sessionId, async (tx) => (await tx.insert(hostRequests).values(row).returning({ id: hostRequests.id }))[0]!.id),
    recordReply: (sessionId, id, reply, repliedAtMs) => c.write(sessionId, async (tx) => void (await tx.update(hostRequests).set({ reply, repliedAtMs }).where(eq(hostRequests.id, id)))),
    requestStep: (executionId, rowId) => c.read(async (db) => (await db.select({ n: count() }).from(hostRequests).where(and(eq(hostRequests.executionId, executionId), lte(hostRequests.id, rowId))))[0]!.n),
    closeUnansweredRequests: (nowMs) => c.writeHost((tx) => closeUnanswered(tx, nowMs)),
  };
}
