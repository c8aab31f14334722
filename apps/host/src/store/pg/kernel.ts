import { desc, eq } from "drizzle-orm";
import { kernelResets } from "../../db/pg-schema";
import type { KernelStore } from "../api/kernel";
import type { KernelResetRow } from "../kernel";
import type { PgContext } from "./context";

/** KernelStore over PostgreSQL. */
export function pgKernel(c: PgContext): KernelStore {
  return {
    recordKernelReset: (row) => c.write(row.sessionId, async (tx) => (await tx.insert(kernelResets).values(row).returning())[0] as KernelResetRow),
    lastKernelReset: (sessionId) => c.read(async (db) => (await db.select().from(kernelResets).where(eq(kernelResets.sessionId, sessionId)).orderBy(desc(kernelResets.id)).limit(1))[0] as KernelResetRow | undefined),
  };
}
