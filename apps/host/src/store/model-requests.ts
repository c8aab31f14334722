import type { UsageRecord } from "@klbr/usage";
import { eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { modelRequests } from "../db/schema";

/** One model request row. */
export type ModelRequestRow = typeof modelRequests.$inferSelect;

/** Open a model request row before the request is sent: a crash mid-request leaves evidence. */
export function startModelRequest(db: HostDb, row: Omit<typeof modelRequests.$inferInsert, "status" | "retries" | "usage" | "reply" | "responseModel" | "error" | "endedAtMs">): void {
  db.insert(modelRequests).values({ ...row, status: "running", retries: 0 }).run();
}

/** Close a request as answered: the reply exactly as received and the usage as reported (null: none). */
export function finishModelRequest(db: HostDb, id: string, end: { reply: unknown; responseModel?: string | null; usage: UsageRecord | null; retries: number; endedAtMs: number }): void {
  db.update(modelRequests).set({ status: "ok", reply: end.reply, responseModel: end.responseModel ?? null, usage: end.usage, retries: end.retries, endedAtMs: end.endedAtMs }).where(eq(modelRequests.id, id)).run();
}

/** Close a request as failed, with a stable code and what the route said. */
export function failModelRequest(db: HostDb, id: string, end: { code: string; message: string; status?: number | null; retries: number; endedAtMs: number }): void {
  db.update(modelRequests)
    .set({ status: "error", error: { code: end.code, message: end.message, status: end.status ?? null }, retries: end.retries, endedAtMs: end.endedAtMs })
    .where(eq(modelRequests.id, id))
    .run();
}

/** Requests left running by a host that stopped mid-request: closed as `host_restart` (no reply was recorded, so none is replayed). */
export function closeRunningModelRequests(db: HostDb, nowMs: number): string[] {
  return db
    .update(modelRequests)
    .set({ status: "error", error: { code: "host_restart", message: "the host stopped before the reply arrived", status: null }, endedAtMs: nowMs })
    .where(eq(modelRequests.status, "running"))
    .returning({ id: modelRequests.id })
    .all()
    .map((r) => r.id);
}

/** A session's requests, oldest first. */
export function sessionModelRequests(db: HostDb, sessionId: string): ModelRequestRow[] {
  return db.select().from(modelRequests).where(eq(modelRequests.sessionId, sessionId)).orderBy(modelRequests.startedAtMs, modelRequests.id).all();
}
