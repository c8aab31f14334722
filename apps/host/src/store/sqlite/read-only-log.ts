import Database from "better-sqlite3";
import type { LogViewStore } from "../api/log-view";
import { sqliteLogView } from "./log-view";

/**
 * The log views alone over a read-only connection to a log another process writes (`klbr log`):
 * what `readOnlySqliteStore(file)` answers for them, without loading the whole Store (about a
 * second of module loading from source, for a command that reads one file).
 */
export function readOnlySqliteLog(file: string): LogViewStore & { close(): Promise<void> } {
  const sqlite = new Database(file, { readonly: true, fileMustExist: true });
  sqlite.pragma("busy_timeout = 5000");
  return { ...sqliteLogView({ sqlite }), close: async () => void sqlite.close() };
}
