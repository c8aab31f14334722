import { eq } from "drizzle-orm";
import { modelRequests } from "../../db/pg-schema";
import type { ModelRequestsStore } from "../api/model-requests";
import type { ModelRequestRow } from "../model-requests";
import type { PgContext, Q } from "./context";

/** Close a request as answered on `q` (the turn's commit of a reply runs it with the transcript record). */
export async function finishRequestOn(q: Q, id: string, end: { reply: unknown; responseModel?: string | null; usage: unknown; retries: number; endedAtMs: number }): Promise<void> {
  await q.update(modelRequests).set({ status: "ok", reply: end.reply, responseModel: end.responseModel ?? null, usage: end.usage as never, retries: end.retries, endedAtMs: end.endedAtMs }).where(eq(modelRequests.id, id));
}

/** Requests left running closed as host_restart on `q`; their ids. */
export async function closeRunningOn(q: Q, nowMs: number): Promise<string[]> {
  const rows = await q
    .update(modelRequests)
    .set({ status: "error", error: { code: "host_restart", message: "the host stopped before the reply arrived", status: null }, endedAtMs: nowMs })
    .where(eq(modelRequests.status, "running"))
    .returning({ id: modelRequests.id });
  return rows.map((r) => r.id);
}

/** ModelRequestsStore over PostgreSQL. */
export function pgModelRequests(c: PgContext): ModelRequestsStore {
  return {
    startModelRequest: (row) => c.write(row.sessionId, async (tx) => void (await tx.insert(modelRequests).values({ ...row, frontierId: row.frontierId ?? null, status: "running", retries: 0 }))),
    finishModelRequest: (sessionId, id, end) => c.write(sessionId, (tx) => finishRequestOn(tx, id, end)),
    failModelRequest: (sessionId, id, end) =>
      c.write(sessionId, async (tx) => void (await tx.update(modelRequests).set({ status: "error", error: { code: end.code, message: end.message, status: end.status ?? null }, retries: end.retries, endedAtMs: end.endedAtMs }).where(eq(modelRequests.id, id)))),
    closeRunningModelRequests: (nowMs) => c.writeHost((tx) => closeRunningOn(tx, nowMs)),
    sessionModelRequests: (sessionId) => c.read((db) => db.select().from(modelRequests).where(eq(modelRequests.sessionId, sessionId)).orderBy(modelRequests.startedAtMs, modelRequests.id) as Promise<ModelRequestRow[]>),
  };
}
