import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text } from "drizzle-orm/pg-core";

/**
 * The epoch store of @klbr/activation (its schema.ts) in PostgreSQL (C21). It lives here, not in
 * the package: the package stays SQLite-only for its users (better-sqlite3 its one driver), and
 * these tables must be created by the host's PostgreSQL migrations, under the host's one advisory
 * lock and migrations table, like every other table a shared database holds. Kept out of
 * pg-schema.ts because the host's SQLite schema does not hold them (the package's migrations do);
 * test/pg-schema.test.ts compares them with the package's SQLite tables instead.
 */

/** The active behaviour revision: one row (id 1) whose epoch is the activation authority. */
export const activationState = pgTable(
  "activation_state",
  {
    // An identity, as SQLite's integer primary key is a rowid that fills itself in; the store always writes 1.
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    epoch: bigint("epoch", { mode: "number" }).notNull(),
    digest: text("digest"),
    path: text("path"),
    activatedAtMs: bigint("activated_at_ms", { mode: "number" }),
  },
  (t) => [check("activation_state_single_row", sql`${t.id} = 1`), check("activation_state_epoch_nonnegative", sql`${t.epoch} >= 0`)],
);

/** Every activation attempt, refused ones included, in the order they were decided. */
export const activationHistory = pgTable(
  "activation_history",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    atMs: bigint("at_ms", { mode: "number" }).notNull(),
    expectedEpoch: bigint("expected_epoch", { mode: "number" }).notNull(),
    epochBefore: bigint("epoch_before", { mode: "number" }).notNull(),
    epochAfter: bigint("epoch_after", { mode: "number" }).notNull(),
    digest: text("digest"),
    path: text("path").notNull(),
    outcome: text("outcome", { enum: ["activated", "refused", "conflict"] }).notNull(),
    code: text("code"),
    message: text("message"),
  },
  (t) => [index("activation_history_at_ms").on(t.atMs), check("activation_history_outcome", sql`${t.outcome} in ('activated', 'refused', 'conflict')`)],
);
