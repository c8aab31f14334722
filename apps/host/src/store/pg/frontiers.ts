import { and, desc, eq, isNull } from "drizzle-orm";
import { frontiers } from "../../db/pg-schema";
import type { FrontiersStore } from "../api/frontiers";
import type { FrontierRow } from "../frontiers";
import type { PgContext, Q } from "./context";

const first = <T>(rows: unknown[]) => rows[0] as T | undefined;

/** Mark a frontier installed and supersede the session's older uninstalled ones, on `q` (store/frontiers.ts). */
export async function markInstalledOn(q: Q, sessionId: string, id: string, headerRecordId: number, atMs: number): Promise<void> {
  await q.update(frontiers).set({ installedAtMs: atMs, headerRecordId }).where(eq(frontiers.id, id));
  await q.update(frontiers).set({ installedAtMs: atMs }).where(and(eq(frontiers.sessionId, sessionId), isNull(frontiers.installedAtMs)));
}

/** FrontiersStore over PostgreSQL. */
export function pgFrontiers(c: PgContext): FrontiersStore {
  return {
    recordFrontier: (row) => c.write(row.sessionId, async (tx) => first<FrontierRow>(await tx.insert(frontiers).values(row).returning())!),
    pendingFrontier: (sessionId) =>
      c.read(async (db) => first<FrontierRow>(await db.select().from(frontiers).where(and(eq(frontiers.sessionId, sessionId), isNull(frontiers.installedAtMs))).orderBy(desc(frontiers.createdAtMs), desc(frontiers.id)).limit(1))),
    markInstalled: (sessionId, id, headerRecordId, atMs) => c.write(sessionId, (tx) => markInstalledOn(tx, sessionId, id, headerRecordId, atMs)),
    installedFrontier: (sessionId) =>
      c.read(async (db) => {
        // PostgreSQL sorts a null first in DESC, SQLite last: the rows without one are skipped by the find either way.
        const rows = (await db.select().from(frontiers).where(eq(frontiers.sessionId, sessionId)).orderBy(desc(frontiers.installedAtMs), desc(frontiers.createdAtMs))) as FrontierRow[];
        return rows.find((f) => f.installedAtMs !== null && f.headerRecordId !== null);
      }),
    getFrontier: (id) => c.read(async (db) => first<FrontierRow>(await db.select().from(frontiers).where(eq(frontiers.id, id)))),
  };
}
