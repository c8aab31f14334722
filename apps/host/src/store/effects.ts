import { and, eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { effects } from "../db/schema";
import { recordOutbound } from "./events";

/** One effect row with its receipt. */
export type EffectRow = typeof effects.$inferSelect;

/** The receipt a cell gets for a local send (spec "Scope, waiting and receipts"). */
export interface SendReceipt {
  effect_id: string;
  status: "confirmed" | "held";
  event_id: number | null;
  reason: string | null;
}

/** The effect an execution already made for one request identity, if any (retries return it). */
export function findEffect(db: HostDb, executionId: string, requestId: string): EffectRow | undefined {
  return db
    .select()
    .from(effects)
    .where(and(eq(effects.executionId, executionId), eq(effects.requestId, requestId)))
    .get();
}

/** Insert an effect row. */
export function insertEffect(db: HostDb, row: typeof effects.$inferInsert): EffectRow {
  return db.insert(effects).values(row).returning().get();
}

/** One effect by id. */
export function getEffect(db: HostDb, id: string): EffectRow | undefined {
  return db.select().from(effects).where(eq(effects.id, id)).get();
}

/** A local send's effect (and its operator-lane event) in one immediate transaction; see EffectsStore.recordSend. */
export function recordSend(db: HostDb, row: Omit<typeof effects.$inferInsert, "eventId">, outbound: { text: string } | null, check: () => void): EffectRow {
  return db.transaction(
    (tx) => {
      const raced = findEffect(tx as never, row.executionId, row.requestId);
      if (raced) return raced;
      check();
      const event = outbound === null ? null : recordOutbound(tx as never, { sessionId: row.sessionId, text: outbound.text, effectId: row.id, atMs: row.createdAtMs });
      return insertEffect(tx as never, { ...row, eventId: event?.id ?? null });
    },
    { behavior: "immediate" },
  );
}

/** The receipt shape of an effect row. */
export function receiptOf(row: EffectRow): SendReceipt {
  return { effect_id: row.id, status: row.status, event_id: row.eventId, reason: row.reason };
}
