import { asc, eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { headerRecords } from "../db/schema";

/** Append a header pin or revision record for a session. */
export function appendHeaderRecord(
  db: HostDb,
  row: { sessionId: string; type: "header_pin" | "header_revision"; digest: string; record: unknown; atMs: number },
): void {
  db.insert(headerRecords).values(row).run();
}

/** A session's header records in the order they were written. */
export function headerChain(db: HostDb, sessionId: string): unknown[] {
  return db
    .select({ record: headerRecords.record })
    .from(headerRecords)
    .where(eq(headerRecords.sessionId, sessionId))
    .orderBy(asc(headerRecords.id))
    .all()
    .map((r) => r.record);
}
