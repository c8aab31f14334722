import { and, asc, desc, eq, gt } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { headerRecords } from "../db/schema";
import { placeholder, preparedPerConnection } from "./prepared";

// A new generation pins or observes its header and every model request observes it again: these
// run on a warm spare's first cell and on each step, where building them through drizzle per call
// cost more than running them (about 0.5 ms each on a spare's bind).
const statements = preparedPerConnection((db: HostDb) => {
  const p = placeholder;
  return {
    append: db
      .insert(headerRecords)
      .values({ sessionId: p("sessionId"), type: p("type"), digest: p("digest"), record: p("record"), atMs: p("atMs") })
      .returning({ id: headerRecords.id })
      .prepare(),
    chain: db.select({ record: headerRecords.record }).from(headerRecords).where(eq(headerRecords.sessionId, p("sessionId"))).orderBy(asc(headerRecords.id)).prepare(),
  };
});

/** Append a header pin or revision record for a session; returns its id. */
export function appendHeaderRecord(
  db: HostDb,
  row: { sessionId: string; type: "header_pin" | "header_revision"; digest: string; record: unknown; atMs: number },
): number {
  return statements(db).append.get(row)!.id;
}

/** A session's header rows after `afterId`, with their ids, in the order they were written. */
export function headerRows(db: HostDb, sessionId: string, afterId = 0): Array<{ id: number; type: string; digest: string; record: unknown }> {
  return db
    .select({ id: headerRecords.id, type: headerRecords.type, digest: headerRecords.digest, record: headerRecords.record })
    .from(headerRecords)
    .where(and(eq(headerRecords.sessionId, sessionId), gt(headerRecords.id, afterId)))
    .orderBy(asc(headerRecords.id))
    .all();
}

/** The session's newest pin (its head): id and text; undefined before the first pin. */
export function latestPin(db: HostDb, sessionId: string): { id: number; text: string; digest: string } | undefined {
  const row = db
    .select({ id: headerRecords.id, record: headerRecords.record })
    .from(headerRecords)
    .where(and(eq(headerRecords.sessionId, sessionId), eq(headerRecords.type, "header_pin")))
    .orderBy(desc(headerRecords.id))
    .get();
  if (!row) return undefined;
  const pin = row.record as { text: string; digest: string };
  return { id: row.id, text: pin.text, digest: pin.digest };
}

/** One header record by id. */
export function headerRecord(db: HostDb, id: number): { id: number; type: string; digest: string; record: unknown } | undefined {
  return db.select({ id: headerRecords.id, type: headerRecords.type, digest: headerRecords.digest, record: headerRecords.record }).from(headerRecords).where(eq(headerRecords.id, id)).get();
}

/** A session's header records in the order they were written. */
export function headerChain(db: HostDb, sessionId: string): unknown[] {
  return statements(db)
    .chain.all({ sessionId })
    .map((r) => r.record);
}
