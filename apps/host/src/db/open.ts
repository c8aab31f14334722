import { join } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { HostError } from "../errors";
import { hostPackageRoot } from "../paths";
import { secureDatabaseFiles } from "./secure";
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

/** SQLite's codes for a file that is not a database or is damaged. */
const CORRUPT_CODES = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB"]);

function corrupt(file: string, detail: string): HostError {
  return new HostError(
    "DATABASE_CORRUPT",
    `${file} is damaged (${detail}); nothing was written to it. Stop every klbr process, move the file aside (with its -wal and -shm) and restore a backup, or salvage it with: sqlite3 ${file} .recover | sqlite3 <new file>`,
  );
}

/**
 * Open the host's log as a host or `klbr init` does: the files 0600 (C15), WAL mode, then
 * `PRAGMA quick_check`, so a malformed file is refused at start instead of appended to.
 */
export function openHostDatabase(file: string): Database.Database {
  secureDatabaseFiles(file);
  let sqlite: Database.Database | undefined;
  try {
    sqlite = openSqlite(file);
    const rows = sqlite.pragma("quick_check") as Array<{ quick_check: string }>;
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== "ok");
    if (problems.length > 0) throw corrupt(file, `PRAGMA quick_check: ${problems.slice(0, 3).join("; ")}`);
  } catch (error) {
    sqlite?.close();
    const code = (error as { code?: string }).code;
    if (code !== undefined && CORRUPT_CODES.has(code)) throw corrupt(file, `${code}: ${(error as Error).message}`);
    throw error;
  }
  // The -wal and -shm files exist now; one made by an older klbr may still be 0644.
  secureDatabaseFiles(file);
  return sqlite;
}
