// PostgreSQL rows in SQLite's shape, for the read views whose row mappings both databases share
// (store/log-view.ts, session-views.ts): snake_case column names, JSON as the text written (`json`
// keeps it byte for byte, as SQLite's text does), booleans as SQLite's 0/1.
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";

/** A drizzle select of every column of `table`, each under its SQL name, in SQLite's shape. */
export function sqliteShaped(table: PgTable): Record<string, PgColumn | SQL> {
  const fields: Record<string, PgColumn | SQL> = {};
  for (const c of Object.values(getTableColumns(table)) as PgColumn[]) {
    fields[c.name] = c.dataType === "json" ? sql`${c}::text` : c.dataType === "boolean" ? sql`${c}::int` : c;
  }
  return fields;
}
