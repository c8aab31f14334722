import { is } from "drizzle-orm";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { expect, test } from "vitest";
import { activationHistory, activationState } from "@klbr/activation";
import * as pgSchemaHost from "../src/db/pg-schema";
import * as pgSchemaActivation from "../src/db/pg-schema-activation";
import * as sqliteSchemaHost from "../src/db/schema";

// The epoch store's tables: in SQLite the activation package's migrations create them, in
// PostgreSQL the host's (pg-schema-activation.ts); compared here like every other table.
const sqliteSchema = { ...sqliteSchemaHost, activationHistory, activationState };
const pgSchema = { ...pgSchemaHost, ...pgSchemaActivation };

/**
 * The SQLite and PostgreSQL schemas describe the same records (C21): same tables, columns,
 * nullability, keys, defaults and indexes; only the types differ, and only as this map says
 * (pg-schema.ts says why). A column added to one and not the other fails here.
 */
const TYPE_MAP: Record<string, string> = {
  SQLiteInteger: "PgBigInt53",
  SQLiteBoolean: "PgBoolean",
  SQLiteText: "PgText",
  SQLiteTextJson: "PgJson",
  SQLiteBlobBuffer: "PgCustomColumn",
};

/**
 * Integer columns that hold fractions: SQLite's integer affinity keeps a REAL it cannot convert
 * losslessly, PostgreSQL's bigint refuses it, so these are double precision there
 * (`runtime.wait(0.05)`'s seconds: the PostgreSQL matrix found it).
 */
const FRACTIONAL = new Set(["waits.seconds"]);

interface Shape {
  columns: Record<string, { type: string; notNull: boolean; primary: boolean; hasDefault: boolean; enumValues?: string[] }>;
  indexes: Record<string, { unique: boolean; on: string[] }>;
}

type AnyConfig = ReturnType<typeof sqliteConfig> | ReturnType<typeof pgConfig>;

function shape(config: AnyConfig, type: (columnType: string, column: string) => string): Shape {
  const columns: Shape["columns"] = {};
  for (const c of config.columns) {
    // An identity column is generated, not defaulted: both mean "the database fills it in".
    const generated = (c as { generatedIdentity?: unknown }).generatedIdentity !== undefined || (c as { autoIncrement?: boolean }).autoIncrement === true;
    columns[c.name] = { type: type(c.columnType, `${config.name}.${c.name}`), notNull: c.notNull, primary: c.primary, hasDefault: c.hasDefault || generated, enumValues: c.enumValues };
  }
  const indexes: Shape["indexes"] = {};
  for (const i of config.indexes) {
    const on = i.config.columns.map((c) => (c as { name: string }).name);
    indexes[i.config.name!] = { unique: i.config.unique ?? false, on };
  }
  return { columns, indexes };
}

function tables<T>(module: Record<string, unknown>, kind: abstract new (...args: never[]) => T): Map<string, T> {
  const found = new Map<string, T>();
  for (const [name, value] of Object.entries(module)) if (is(value, kind as never)) found.set(name, value as T);
  return found;
}

const sqliteTables = tables(sqliteSchema, SQLiteTable);
const pgTables = tables(pgSchema, PgTable);

test("both schemas export the same tables under the same names", () => {
  expect([...pgTables.keys()].sort()).toEqual([...sqliteTables.keys()].sort());
  expect(sqliteTables.size).toBeGreaterThan(20);
  for (const name of ["hosts", "leases"]) expect(sqliteTables.has(name)).toBe(true);
});

test.each([...sqliteTables.keys()].sort())("%s: same columns, keys, defaults and indexes in SQLite and PostgreSQL", (name) => {
  const lite = sqliteConfig(sqliteTables.get(name) as never);
  const pgc = pgConfig(pgTables.get(name) as never);
  expect(pgc.name).toBe(lite.name);
  const expected = shape(lite, (t, column) => (FRACTIONAL.has(column) && t === "SQLiteInteger" ? "PgDoublePrecision" : (TYPE_MAP[t] ?? `unmapped ${t}`)));
  expect(shape(pgc, (t) => t)).toEqual(expected);
});
