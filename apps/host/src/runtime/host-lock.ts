import { readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { HostError } from "../errors";

/** SQLite's answers when another connection holds the lock. */
const BUSY = new Set(["SQLITE_BUSY", "SQLITE_LOCKED"]);

/** The informational file beside the lock naming the holder's pid (the lock itself cannot be read while held). */
export function holderFile(lockFile: string): string {
  return `${lockFile}.pid`;
}

function holderOf(lockFile: string): string {
  try {
    const pid = readFileSync(holderFile(lockFile), "utf8").trim();
    return /^[1-9][0-9]*$/.test(pid) ? `pid ${pid}` : "pid unknown";
  } catch {
    return "pid unknown";
  }
}

/**
 * Hold an exclusive SQLite lock (fcntl under the hood) on `file` for as long as the connection
 * lives: the OS drops it when the process dies, kill -9 included, so a stale lock needs no
 * takeover and two starters can never both win. The file is never removed: unlinking a lock
 * file lets a late starter lock a fresh inode beside the live one.
 */
function lockExclusively(file: string): Database.Database {
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = MEMORY");
    // The first write takes the EXCLUSIVE lock; in this locking mode it is never given back.
    db.exec("BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS host_lock (held INTEGER); COMMIT;");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Take the data directory's host lock: one host (daemon or embedded) per data directory, taken
 * before crash recovery, which would otherwise close a live host's running cells and wake its
 * waits. Returns the release.
 */
export function acquireHostLock(file: string, legacyCleared = false): () => void {
  let db: Database.Database;
  try {
    db = lockExclusively(file);
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (BUSY.has(code)) {
      throw new HostError("HOST_ALREADY_RUNNING", `a klbr host (${holderOf(file)}) already uses this data directory (${file} is locked)`);
    }
    if (code !== "SQLITE_NOTADB" || legacyCleared) throw error;
    // A pid file an older klbr left: emptied in place (same inode, so a holder's lock stays valid).
    truncateSync(file, 0);
    return acquireHostLock(file, true);
  }
  try {
    writeFileSync(holderFile(file), `${process.pid}\n`, { mode: 0o600 });
  } catch {
    /* the pid only makes a second host's message more helpful */
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (holderOf(file) === `pid ${process.pid}`) rmSync(holderFile(file), { force: true });
    db.close();
  };
}
