// The three stores the PostgreSQL benches compare (bench/pg-host, bench/pg-turn): SQLite, and
// PostgreSQL with a durable commit and with synchronous_commit off (SQLite WAL NORMAL's durability),
// each a database of its own on one throwaway cluster; and the report line of each.
import type { TestPostgres } from "../../../test-support/postgres";
import { databaseChoice } from "../src/db/database-url";
import type { PostgresChoice } from "../src/store/host-log";
import { ms, percentile } from "./figures";

/** One store to measure: SQLite when `postgres` is absent. */
export type Mode = { name: string; postgres?: string };

/** SQLite first (the baseline of every ratio), then PostgreSQL durable and relaxed. */
export function storeModes(cluster: TestPostgres): Mode[] {
  const relaxedUrl = cluster.createDatabase();
  return [
    { name: "SQLite, leases" },
    { name: "PostgreSQL, leases, durable commit", postgres: cluster.createDatabase() },
    { name: "PostgreSQL, leases, synchronous_commit off", postgres: `${relaxedUrl}&options=${encodeURIComponent("-c synchronous_commit=off")}` },
  ];
}

/** Host.start's option for the mode's store (none for SQLite). */
export function storeOption(mode: Mode): { postgres?: PostgresChoice } {
  return mode.postgres ? { postgres: databaseChoice(mode.postgres) as PostgresChoice } : {};
}

/** One line per mode: p50, `tail` (its name and value), and the ratio to SQLite's p50. */
export function reportModes(modes: Mode[], figures: number[][], tail: { name: string; of: (xs: number[]) => number }): void {
  const base = percentile(figures[0]!, 50);
  for (const [i, mode] of modes.entries()) {
    const p50 = percentile(figures[i]!, 50);
    console.log(`  ${mode.name.padEnd(44)} p50 ${ms(p50).padEnd(14)} ${tail.name} ${ms(tail.of(figures[i]!)).padEnd(14)} x${(p50 / base).toFixed(2)} SQLite's p50${i === 0 ? "" : "  target <= x1.5"}`);
  }
}
