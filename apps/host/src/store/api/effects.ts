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
  /**
   * A local send's effect in one transaction of its session (one at a time per session): the effect
   * its request identity already made when a retry raced it there (returned as it is), else
   * `check()` (it throws to refuse: nothing is written), the operator-lane event when `outbound`
   * (the effect's `eventId` is set to it), and the effect row.
   */
  recordSend(row: Omit<typeof effects.$inferInsert, "eventId">, outbound: { text: string } | null, check: () => void): Promise<EffectRow>;
}
