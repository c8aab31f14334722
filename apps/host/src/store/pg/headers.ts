import { and, asc, desc, eq, gt } from "drizzle-orm";
import { headerRecords } from "../../db/pg-schema";
import type { HeaderPlan, HeadersStore } from "../api/headers";
import type { PgContext, Q } from "./context";
import { currentSourcesOn } from "./orientation";

/** Append a header record on `q`; its id. */
export async function appendHeaderOn(q: Q, row: { sessionId: string; type: "header_pin" | "header_revision"; digest: string; record: unknown; atMs: number }): Promise<number> {
  return (await q.insert(headerRecords).values(row).returning({ id: headerRecords.id }))[0]!.id;
}

const fields = { id: headerRecords.id, type: headerRecords.type, digest: headerRecords.digest, record: headerRecords.record };

const chainOn = async (q: Q, sessionId: string) => (await q.select({ record: headerRecords.record }).from(headerRecords).where(eq(headerRecords.sessionId, sessionId)).orderBy(asc(headerRecords.id))).map((r) => r.record);

async function plannedOn<T>(q: Q, sessionId: string, plan: HeaderPlan<T>) {
  const [chain, global, own] = [await chainOn(q, sessionId), await currentSourcesOn(q, { kind: "global" }), await currentSourcesOn(q, { kind: "session", session_id: sessionId })];
  return plan(chain, { global, own });
}

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
    headerChain: (sessionId) => c.read((db) => chainOn(db, sessionId)),
    observeHeader: async (sessionId, plan, atMs) => {
      const seen = await c.read((db) => plannedOn(db, sessionId, plan));
      if (seen.append === null) return seen.result;
      return c.write(sessionId, async (tx) => {
        // One at a time per session, as SQLite's write lock: what the plan read is what it appends to.
        await c.serialize(tx, sessionId);
        const { append, result } = await plannedOn(tx, sessionId, plan);
        if (append !== null) await appendHeaderOn(tx, { sessionId, ...append, atMs });
        return result;
      });
    },
  };
}
