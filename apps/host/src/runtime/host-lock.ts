import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { HostError } from "../errors";

/** Whether a process with this pid exists (EPERM means it does, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Locks this process holds: a lock file naming our pid but not in here was left by an earlier process that had our pid. */
const held = new Set<string>();

function holderOf(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Take the data directory's host lock: one host (daemon or embedded) per data directory, taken
 * before crash recovery, which would otherwise close a live host's running cells and wake its
 * waits. A lock whose holder is gone (kill -9) is stale and taken over. Returns the release.
 */
export function acquireHostLock(file: string): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = holderOf(file);
      const live = holder === process.pid ? held.has(file) : holder !== null && alive(holder);
      if (live) {
        throw new HostError("HOST_ALREADY_RUNNING", `a klbr host (pid ${holder}) already uses this data directory (${file})`);
      }
      try {
        unlinkSync(file); // stale: its holder is gone
      } catch {
        /* another starter removed it first; try again */
      }
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    held.add(file);
    return () => {
      if (!held.delete(file) || holderOf(file) !== process.pid) return;
      try {
        unlinkSync(file);
      } catch {
        /* already gone */
      }
    };
  }
  throw new HostError("HOST_ALREADY_RUNNING", `could not take the host lock ${file}: other hosts keep starting`);
}
