import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs";
import { HostError } from "../errors";

/** C15: the data directory is 0700 and the database files 0600, even when they existed before. */
export const DATA_DIR_MODE = 0o700;
export const DATABASE_MODE = 0o600;

/** The database and the files SQLite keeps beside it in WAL mode. */
export function databaseFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * Set `path` to `mode` and check that it holds: a directory or file another uid owns (chmod
 * EPERM), or a filesystem that ignores chmod, leaves the log readable by others, so the host
 * refuses to start rather than write into it.
 */
export function tighten(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch (error) {
    throw insecure(path, mode, `chmod failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const actual = statSync(path).mode & 0o777;
  if (actual !== mode) throw insecure(path, mode, `it is still ${octal(actual)} after chmod`);
}

/** Tighten the data directory itself (its subdirectories are created 0700 by the host). */
export function secureDataDir(dataDir: string): void {
  tighten(dataDir, DATA_DIR_MODE);
}

/**
 * Create the database file 0600 before SQLite opens it (SQLite gives its -wal and -shm files the
 * database's mode), and tighten whichever of the three already exist.
 */
export function secureDatabaseFiles(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, "a", DATABASE_MODE));
  for (const path of databaseFiles(file)) if (existsSync(path)) tighten(path, DATABASE_MODE);
}

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}

function insecure(path: string, mode: number, why: string): HostError {
  return new HostError(
    "DATA_DIR_PERMISSIONS",
    `${path} must be ${octal(mode)} (C15) but cannot be tightened: ${why}; run klbr as the owner of the data directory, or choose another with --data-dir`,
  );
}
