import { desc, eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { kernelResets } from "../db/schema";

/** One kernel.reset row. */
export type KernelResetRow = typeof kernelResets.$inferSelect;

/** Record kernel.reset: a new workbench generation and the skill set revision its hello echoed. */
export function recordKernelReset(db: HostDb, row: typeof kernelResets.$inferInsert): KernelResetRow {
  return db.insert(kernelResets).values(row).returning().get();
}

/** How many generations a session has had; the next one is numbered after them. */
export function lastKernelReset(db: HostDb, sessionId: string): KernelResetRow | undefined {
  return db
    .select()
    .from(kernelResets)
    .where(eq(kernelResets.sessionId, sessionId))
    .orderBy(desc(kernelResets.id))
    .limit(1)
    .get();
}
