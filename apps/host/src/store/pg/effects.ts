import { and, eq } from "drizzle-orm";
import { effects } from "../../db/pg-schema";
import type { EffectsStore } from "../api/effects";
import type { EffectRow } from "../effects";
import type { PgContext } from "./context";

/** EffectsStore over PostgreSQL. */
export function pgEffects(c: PgContext): EffectsStore {
  return {
    findEffect: (executionId, requestId) => c.read(async (db) => (await db.select().from(effects).where(and(eq(effects.executionId, executionId), eq(effects.requestId, requestId))))[0] as EffectRow | undefined),
    insertEffect: (row) => c.write(row.sessionId, async (tx) => (await tx.insert(effects).values(row).returning())[0] as EffectRow),
    getEffect: (id) => c.read(async (db) => (await db.select().from(effects).where(eq(effects.id, id)))[0] as EffectRow | undefined),
  };
}
