// The embedded-host tests on PostgreSQL (C21's matrix, KLBR_TEST_STORE=postgres): those tests read
// the host's records through `host.db` / `host.sqlite`, SQLite handles, synchronously. On
// PostgreSQL the host has none, so a test host gets a mirror instead: each time a test asks for
// the handle, every table of the host's PostgreSQL database is read in one statement (psql, run
// synchronously, so the test's synchronous read stays synchronous) and copied into a SQLite file
// with the host's schema, in insertion order where PostgreSQL keeps one. The test then asserts on
// what the PostgreSQL store wrote, through the same queries it uses on SQLite. The handle the test
// gets is read-only: a test that writes records directly fails loudly instead of writing into the
// copy (such tests are SQLite-only; see vitest.config.ts).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrateHostDb, type HostDb } from "../src/db/open";
import * as schema from "../src/db/schema";
import { openActivationStore } from "@klbr/activation";
import { postgresBinDir } from "../../../test-support/postgres";

/** The SQLite handles a test reads, refreshed from PostgreSQL at each call. */
export interface Mirror {
  refresh(): { db: HostDb; sqlite: Database.Database };
  close(): void;
}

/** A table of the mirror: its columns as SQLite declares them, and how PostgreSQL's rows are ordered. */
interface TableShape {
  name: string;
  /** Each column and its PostgreSQL type (json, boolean, bytea are stored otherwise in SQLite). */
  columns: Array<{ name: string; pgType: string }>;
  orderBy: string;
}

/** One statement through psql on the database of `url`; its single text result. */
function psqlValue(url: string, statement: string): string {
  const done = spawnSync(join(postgresBinDir()!, "psql"), ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statement], {
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (done.status !== 0) throw new Error(`psql on the test database: ${(done.stderr || done.stdout).trim()}`);
  return done.stdout.replace(/\n$/, "");
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Rows in SQLite's rowid order, as near as PostgreSQL can say it: an integer key first (an
 * identity is in insertion order), else the first `*_at_ms` column (the time the row was made),
 * then ctid (the heap's order, insertion order for rows never updated).
 */
function orderFor(columns: Array<{ name: string; type: string }>, key: string[]): string {
  const byKey = key.length === 1 && columns.find((c) => c.name === key[0] && /int/i.test(c.type));
  if (byKey) return quote(byKey.name);
  const made = columns.find((c) => /(^|_)(created|started|at)_at_ms$|^at_ms$|^created_at_ms$/.test(c.name));
  return made ? `${quote(made.name)}, ctid` : "ctid";
}

/** A mirror of the PostgreSQL database at `url`, in a SQLite file under `dir`. */
export function pgMirror(url: string, dir: string): Mirror {
  const file = join(dir, "pg-mirror.sqlite");
  const writer = new Database(file);
  writer.pragma("journal_mode = WAL");
  migrateHostDb(writer);
  openActivationStore(writer).migrate();
  writer.pragma("foreign_keys = OFF");
  const pgColumns = JSON.parse(
    psqlValue(url, "SELECT coalesce(json_object_agg(table_name || '.' || column_name, data_type), '{}') FROM information_schema.columns WHERE table_schema = 'public'"),
  ) as Record<string, string>;
  const inPostgres = new Set(Object.keys(pgColumns).map((k) => k.split(".")[0]));
  const tables: TableShape[] = [];
  for (const { name } of writer.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_\\_%' ESCAPE '\\'").all() as Array<{ name: string }>) {
    if (!inPostgres.has(name)) continue;
    const info = writer.prepare(`PRAGMA table_info(${quote(name)})`).all() as Array<{ name: string; type: string; pk: number }>;
    const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    const missing = info.filter((c) => !pgColumns[`${name}.${c.name}`]);
    if (missing.length > 0) throw new Error(`pg mirror: ${name}.${missing[0]!.name} is not in PostgreSQL (pg-schema.test.ts should have said so)`);
    tables.push({ name, columns: info.map((c) => ({ name: c.name, pgType: pgColumns[`${name}.${c.name}`]! })), orderBy: orderFor(info, key) });
  }
  const everything = `SELECT json_build_object(${tables.map((t) => `'${t.name}', (SELECT coalesce(json_agg(r ORDER BY ${t.orderBy}), '[]') FROM ${quote(t.name)} r)`).join(", ")})`;
  const inserts = new Map(tables.map((t) => [t.name, writer.prepare(`INSERT INTO ${quote(t.name)} (${t.columns.map((c) => quote(c.name)).join(", ")}) VALUES (${t.columns.map(() => "?").join(", ")})`)]));
  const copy = writer.transaction((rows: Record<string, Array<Record<string, unknown>>>) => {
    for (const t of tables) {
      writer.prepare(`DELETE FROM ${quote(t.name)}`).run();
      const insert = inserts.get(t.name)!;
      for (const row of rows[t.name] ?? []) insert.run(...t.columns.map((c) => sqliteValue(row[c.name], c.pgType)));
    }
  });
  const reader = new Database(file, { readonly: true });
  const db = drizzle(reader, { schema });
  return {
    refresh() {
      copy(JSON.parse(psqlValue(url, everything)));
      return { db, sqlite: reader };
    },
    close() {
      reader.close();
      writer.close();
    },
  };
}

/** A value of PostgreSQL's JSON row as SQLite stores it: booleans 0/1, JSON columns as their text, bytea as bytes. */
function sqliteValue(value: unknown, pgType: string): unknown {
  if (value === undefined || value === null) return null;
  if (pgType === "json" || pgType === "jsonb") return JSON.stringify(value);
  if (pgType === "boolean") return value ? 1 : 0;
  if (pgType === "bytea") return Buffer.from(String(value).replace(/^\\x/, ""), "hex");
  return value;
}
