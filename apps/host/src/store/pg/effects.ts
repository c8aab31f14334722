import { and, eq } from "drizzle-orm";
import { effects, events } from "../../db/pg-schema";
import type { EffectsStore } from "../api/effects";
import type { EffectRow } from "../effects";
import type { PgContext } from "./context";

/** EffectsStore over PostgreSQL. */
export function pgEffects(c: PgContext): EffectsStore {
  return {
    findEffect: (executionId, requestId) => c.read(async (db) => (await db.select().from(effects).where(and(eq(effects.executionId, executionId), eq(effects.requestId, requestId))))[0] as EffectRow | undefined),
    insertEffect: (row) => c.write(row.sessionId, async (tx) => (await tx.insert(effects).values(row).returning())[0] as EffectRow),
    recordSend: (row, outbound, check) =>
      c.write(row.sessionId, async (tx) => {
        // As SQLite's BEGIN IMMEDIATE: a racing retry of the same request waits here and then finds this one's effect.
        await c.serialize(tx, row.sessionId);
        const [raced] = await tx.select().from(effects).where(and(eq(effects.executionId, row.executionId), eq(effects.requestId, row.requestId)));
        if (raced) return raced as EffectRow;
        check();
        const [event] = outbound === null ? [] : await tx.insert(events).values({ sessionId: row.sessionId, lane: "operator", direction: "out", source: `session:${row.sessionId}`, receivedAtMs: row.createdAtMs, payload: { text: outbound.text }, effectId: row.id }).returning({ id: events.id });
        return (await tx.insert(effects).values({ ...row, eventId: event?.id ?? null }).returning())[0] as EffectRow;
      }),
    getEffect: (id) => c.read(async (db) => (await db.select().from(effects).where(eq(effects.id, id)))[0] as EffectRow | undefined),
  };
}
