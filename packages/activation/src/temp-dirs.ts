import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Temporary release directories: a snapshot writes `<releasesDir>/.tmp-<pid>-XXXXXX` and renames
 * it into place. A process killed in between leaves it behind, so each snapshot first removes the
 * ones whose writer is gone.
 */

const PREFIX = ".tmp-";
const NAMED = /^\.tmp-(\d+)-[^/]+$/;
/** A temporary directory without a writer pid (older versions) is stale after this long. */
export const UNNAMED_TEMP_MAX_AGE_MS = 60 * 60 * 1000;

/** The mkdtemp prefix of this process's temporary release directories. */
export function tempPrefix(releasesDir: string): string {
  return path.join(releasesDir, `${PREFIX}${process.pid}-`);
}

function running(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user holds that pid; it is running.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Whether a `.tmp-*` entry named `name`, last modified at `mtimeMs`, can no longer be in use. */
export function isStaleTemp(name: string, mtimeMs: number, now: number = Date.now()): boolean {
  if (!name.startsWith(PREFIX)) return false;
  const named = NAMED.exec(name);
  if (named) return !running(Number(named[1]));
  return now - mtimeMs > UNNAMED_TEMP_MAX_AGE_MS;
}

/**
 * Remove the stale temporary directories under `releasesDir` (a missing folder has none), with
 * `remove` (which must cope with read-only modes). Returns the names removed; an entry that
 * vanishes or cannot be removed meanwhile is skipped: the next snapshot tries again.
 */
export function sweepStaleTemps(releasesDir: string, remove: (dir: string) => void): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(releasesDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const full = path.join(releasesDir, name);
    try {
      const stat = fs.lstatSync(full);
      if (!stat.isDirectory() || !isStaleTemp(name, stat.mtimeMs)) continue;
      remove(full);
      removed.push(name);
    } catch {
      // Gone already, or not removable now.
    }
  }
  return removed;
}
