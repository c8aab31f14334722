import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { is } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migratePostgres, openPostgres, PG_MIGRATIONS, pgMigrationsFolder, type PgHost } from "../src/db/pg-open";
import { ACTIVATION_MIGRATIONS_TABLE, openActivationStore } from "@klbr/activation";
import * as pgSchemaHost from "../src/db/pg-schema";
import * as pgSchemaActivation from "../src/db/pg-schema-activation";
import { HOST_MIGRATIONS_TABLE, migrateHostDb, openSqlite } from "../src/db/open";

let db: Awaited<ReturnType<typeof testDatabase>>;
beforeAll(async () => {
  db = await testDatabase();
});
afterAll(async () => {
  await db?.stop();
});

// The host's PostgreSQL migrations create the epoch store's tables too (pg-schema-activation.ts).
const pgSchema = { ...pgSchemaHost, ...pgSchemaActivation };

const journal = () => (JSON.parse(readFileSync(join(pgMigrationsFolder(), "meta", "_journal.json"), "utf8")) as { entries: Array<{ when: number }> }).entries;

test("three hosts starting at once on a fresh database: each migrates under the advisory lock, every migration applied once", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  // Separate pools, as three hosts have: each its own connections, none sharing a session.
  const hosts: PgHost[] = [0, 1, 2].map(() => openPostgres(db.url!, { max: 2 }));
  try {
    await Promise.all(hosts.map((h) => migratePostgres(h.pool)));
    const { rows } = await hosts[0]!.pool.query(`SELECT created_at FROM "${PG_MIGRATIONS.schema}"."${PG_MIGRATIONS.table}" ORDER BY id`);
    expect(rows.map((r: { created_at: string }) => Number(r.created_at))).toEqual(journal().map((e) => e.when));
    // A later start finds nothing to do.
    await migratePostgres(hosts[1]!.pool);
    const again = await hosts[0]!.pool.query(`SELECT count(*)::int AS n FROM "${PG_MIGRATIONS.schema}"."${PG_MIGRATIONS.table}"`);
    expect(again.rows[0].n).toBe(journal().length);
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
});

test("the migrated database has exactly the columns pg-schema.ts declares (the migrations did not drift from the schema)", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const host = openPostgres(db.url!, { max: 1 });
  try {
    await migratePostgres(host.pool);
    const { rows } = await host.pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
      "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> $1",
      [PG_MIGRATIONS.table],
    );
    const actual = rows.map((r) => `${r.table_name}.${r.column_name} ${r.data_type} ${r.is_nullable === "NO" ? "not null" : "null"}`).sort();
    const declared: string[] = [];
    for (const value of Object.values(pgSchema)) {
      if (!is(value, PgTable)) continue;
      const config = getTableConfig(value);
      for (const c of config.columns) declared.push(`${config.name}.${c.name} ${c.getSQLType() === "bigint" ? "bigint" : c.getSQLType()} ${c.notNull ? "not null" : "null"}`);
    }
    expect(actual).toEqual(declared.sort());
  } finally {
    await host.close();
  }
});

// SQLite's declared type -> PostgreSQL's information_schema data_type, as pg-schema.ts maps them.
const TYPES: Record<string, string[]> = { integer: ["bigint", "boolean"], text: ["text", "json"], blob: ["bytea"] };
/** Integer columns holding fractions (SQLite keeps a REAL in them as given): double precision in PostgreSQL, as pg-schema.test.ts says. */
const FRACTIONAL = new Set(["waits.seconds"]);
const compatible = (column: string, lite: string, pgType: string) => TYPES[lite]?.includes(pgType) || (FRACTIONAL.has(column) && lite === "integer" && pgType === "double precision");

test("both dialects, migrated from nothing, hold the same tables and columns (a migration written for one only fails here)", async (ctx) => {
  if (db.skip) return ctx.skip(db.skip);
  const host = openPostgres(db.url!, { max: 1 });
  const sqlite = openSqlite(":memory:");
  try {
    await migratePostgres(host.pool);
    migrateHostDb(sqlite);
    // A host's SQLite file: the host's migrations and the activation package's (the epoch store).
    openActivationStore(sqlite).migrate();
    const { rows } = await host.pool.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
      "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> $1",
      [PG_MIGRATIONS.table],
    );
    const inPg = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, { type: r.data_type, notNull: r.is_nullable === "NO" }]));
    const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN (?, ?)").all(HOST_MIGRATIONS_TABLE, ACTIVATION_MIGRATIONS_TABLE) as Array<{ name: string }>).map((t) => t.name);
    const inSqlite = new Map<string, { type: string; notNull: boolean }>();
    for (const table of tables) {
      for (const c of sqlite.prepare(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`).all(table) as Array<{ name: string; type: string; notnull: number; pk: number }>) {
        inSqlite.set(`${table}.${c.name}`, { type: c.type.toLowerCase(), notNull: c.notnull === 1 || c.pk === 1 });
      }
    }
    expect([...inPg.keys()].sort()).toEqual([...inSqlite.keys()].sort());
    for (const [column, lite] of inSqlite) {
      const pgc = inPg.get(column)!;
      expect({ column, type: compatible(column, lite.type, pgc.type) ? "compatible" : `${lite.type} vs ${pgc.type}`, notNull: pgc.notNull }).toEqual({ column, type: "compatible", notNull: lite.notNull });
    }
  } finally {
    sqlite.close();
    await host.close();
  }
});
