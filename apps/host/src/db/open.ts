import { join } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { hostPackageRoot } from "../paths";
import * as schema from "./schema";

/** The host's drizzle handle over its schema. */
export type HostDb = BetterSQLite3Database<typeof schema>;

/** The host's own migrations table; each package that owns tables keeps its own. */
export const HOST_MIGRATIONS_TABLE = "__klbr_host_migrations";

/** Where the host's drizzle-kit migrations live. */
export function hostMigrationsFolder(): string {
  return join(hostPackageRoot(), "drizzle");
}

/** Open (creating) the SQLite log in WAL mode with a busy timeout, so a reader never blocks the daemon. */
export function openSqlite(file: string): Database.Database {
  const sqlite = new Database(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  return sqlite;
}

/** Wrap a connection with the host schema and apply the host's migrations. */
export function migrateHostDb(sqlite: Database.Database): HostDb {
  const db = drizzle(sqlite, { schema });
  migrate(db, { migrationsFolder: hostMigrationsFolder(), migrationsTable: HOST_MIGRATIONS_TABLE });
  return db;
}
