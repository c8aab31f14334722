import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The active behaviour revision: one row (id 1) whose epoch is the activation authority. A path on
 * disk is never a second pointer; epoch 0 (or no row) means nothing was ever activated.
 */
export const activationState = sqliteTable(
  "activation_state",
  {
    id: integer("id").primaryKey(),
    epoch: integer("epoch").notNull(),
    digest: text("digest"),
    path: text("path"),
    activatedAtMs: integer("activated_at_ms"),
  },
  // Stryker disable next-line all: drizzle-kit reads these when it writes a migration; at run time the tables come from drizzle/*.sql
  (t) => [check("activation_state_single_row", sql`${t.id} = 1`), check("activation_state_epoch_nonnegative", sql`${t.epoch} >= 0`)],
);

/** Every activation attempt, refused ones included, in the order they were decided. */
export const activationHistory = sqliteTable(
  "activation_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    atMs: integer("at_ms").notNull(),
    expectedEpoch: integer("expected_epoch").notNull(),
    epochBefore: integer("epoch_before").notNull(),
    epochAfter: integer("epoch_after").notNull(),
    digest: text("digest"),
    path: text("path").notNull(),
    outcome: text("outcome", { enum: ["activated", "refused", "conflict"] }).notNull(),
    code: text("code"),
    message: text("message"),
  },
  // Stryker disable all: drizzle-kit reads these when it writes a migration; at run time the tables come from drizzle/*.sql
  (t) => [
    index("activation_history_at_ms").on(t.atMs),
    check("activation_history_outcome", sql`${t.outcome} in ('activated', 'refused', 'conflict')`),
  ],
  // Stryker restore all
);
