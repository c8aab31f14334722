import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import * as schema from "../../db/schema";
import { sqliteStore, type SqliteStore } from "./index";

/**
 * A Store over a read-only connection to a log another process writes (the CLI's reads, the web
 * view): no migrations run, WAL lets it read while the daemon writes. Writes through it fail.
 */
export function readOnlySqliteStore(file: string): SqliteStore {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  sqlite.pragma("busy_timeout = 5000");
  return sqliteStore(drizzle(sqlite, { schema }), sqlite);
}
