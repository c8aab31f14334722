import type { effects } from "../../db/schema";
import type { EffectRow } from "../effects";

/** Effects records (store/effects.ts). */
export interface EffectsStore {
  /** The effect an execution already made for one request identity, if any (retries return it). */
  findEffect(executionId: string, requestId: string): Promise<EffectRow | undefined>;
  /** Insert an effect row. */
  insertEffect(row: typeof effects.$inferInsert): Promise<EffectRow>;
  /** One effect by id. */
  getEffect(id: string): Promise<EffectRow | undefined>;
}
