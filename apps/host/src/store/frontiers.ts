import { and, desc, eq, isNull } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { frontiers } from "../db/schema";

/** One frontier row. */
export type FrontierRow = typeof frontiers.$inferSelect;

/** Record a frontier (selected by a cell, or a budget fold by the driver). */
export function recordFrontier(db: HostDb, row: Omit<typeof frontiers.$inferInsert, "installedAtMs" | "headerRecordId">): FrontierRow {
  return db.insert(frontiers).values(row).returning().get();
}

/** The newest frontier a session selected that no request has run under yet. */
export function pendingFrontier(db: HostDb, sessionId: string): FrontierRow | undefined {
  return db.select().from(frontiers).where(and(eq(frontiers.sessionId, sessionId), isNull(frontiers.installedAtMs))).orderBy(desc(frontiers.createdAtMs), desc(frontiers.id)).get();
}

/** Mark a frontier installed under the pin its installation wrote; older uninstalled ones of the session are superseded with it. */
export function markInstalled(db: HostDb, sessionId: string, id: string, headerRecordId: number, atMs: number): void {
  db.update(frontiers).set({ installedAtMs: atMs, headerRecordId }).where(eq(frontiers.id, id)).run();
  db.update(frontiers).set({ installedAtMs: atMs }).where(and(eq(frontiers.sessionId, sessionId), isNull(frontiers.installedAtMs))).run();
}

/** The frontier a session's requests run under now: the newest installed one. */
export function installedFrontier(db: HostDb, sessionId: string): FrontierRow | undefined {
  return db
    .select()
    .from(frontiers)
    .where(eq(frontiers.sessionId, sessionId))
    .orderBy(desc(frontiers.installedAtMs), desc(frontiers.createdAtMs))
    .all()
    .find((f) => f.installedAtMs !== null && f.headerRecordId !== null);
}

/** One frontier by id. */
export function getFrontier(db: HostDb, id: string): FrontierRow | undefined {
  return db.select().from(frontiers).where(eq(frontiers.id, id)).get();
}
