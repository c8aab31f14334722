import Database from "better-sqlite3";

/** The busy timeout `openDatabase` sets, so concurrent writers queue for the lock instead of failing. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** Open a SQLite file the way the activation store expects: WAL journal, busy timeout, foreign keys on. */
export function openDatabase(file: string, options: { busyTimeoutMs?: number } = {}): Database.Database {
  const db = new Database(file);
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
    db.pragma("journal_mode = WAL");
    db.pragma("foreign_keys = ON");
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
