import { and, asc, desc, eq, gt } from "drizzle-orm";
import { headerRecords } from "../../db/pg-schema";
import type { HeadersStore } from "../api/headers";
import type { PgContext, Q } from "./context";

/** Append a header record on `q`; its id. */
export async function appendHeaderOn(q: Q, row: { sessionId: string; type: "header_pin" | "header_revision"; digest: string; record: unknown; atMs: number }): Promise<number> {
  return (await q.insert(headerRecords).values(row).returning({ id: headerRecords.id }))[0]!.id;
}

const fields = { id: headerRecords.id, type: headerRecords.type, digest: headerRecords.digest, record: headerRecords.record };

/** HeadersStore over PostgreSQL. */
export function pgHeaders(c: PgContext): HeadersStore {
  return {
    appendHeaderRecord: (row) => c.write(row.sessionId, (tx) => appendHeaderOn(tx, row)),
    headerRows: (sessionId, afterId = 0) => c.read((db) => db.select(fields).from(headerRecords).where(and(eq(headerRecords.sessionId, sessionId), gt(headerRecords.id, afterId))).orderBy(asc(headerRecords.id))),
    latestPin: (sessionId) =>
      c.read(async (db) => {
        const [row] = await db.select({ id: headerRecords.id, record: headerRecords.record }).from(headerRecords).where(and(eq(headerRecords.sessionId, sessionId), eq(headerRecords.type, "header_pin"))).orderBy(desc(headerRecords.id)).limit(1);
        if (!row) return undefined;
        const pin = row.record as { text: string; digest: string };
        return { id: row.id, text: pin.text, digest: pin.digest };
      }),
    headerRecord: (id) => c.read(async (db) => (await db.select(fields).from(headerRecords).where(eq(headerRecords.id, id)))[0]),
    headerChain: (sessionId) => c.read(async (db) => (await db.select({ record: headerRecords.record }).from(headerRecords).where(eq(headerRecords.sessionId, sessionId)).orderBy(asc(headerRecords.id))).map((r) => r.record)),
  };
}
