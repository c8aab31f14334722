import { chmod, lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SupervisorError } from "./errors.js";
import { isAlive } from "./tree.js";

/** Largest socket path (in bytes) a Linux sockaddr_un holds with its terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

/** A worker's private directory and the socket path inside it. */
export interface PrivateDir {
  dir: string;
  socketPath: string;
}

/** Throw WORKER_SOCKET_PATH_TOO_LONG when `socketPath` does not fit a Unix socket address. */
export function checkSocketPath(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new SupervisorError(
      "WORKER_SOCKET_PATH_TOO_LONG",
      `socket path ${JSON.stringify(socketPath)} is ${bytes} bytes, more than ${MAX_SOCKET_PATH_BYTES}`,
    );
  }
}

/** Private directories are named `klbr-<owner pid>-XXXXXX`, so a later host can tell whose they were. */
const PRIVATE_DIR = /^klbr-(\d+)-[A-Za-z0-9]{6}$/;

/** Create a fresh 0700 directory under `base` (default os.tmpdir()) holding `w.sock`'s path. */
export async function makePrivateDir(base: string = tmpdir()): Promise<PrivateDir> {
  const dir = await mkdtemp(join(base, `klbr-${process.pid}-`));
  try {
    await chmod(dir, 0o700);
    const socketPath = join(dir, "w.sock");
    checkSocketPath(socketPath);
    return { dir, socketPath };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Remove a private directory and whatever is left in it; never throws. */
export async function removePrivateDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * Remove the private directories under `base` (default os.tmpdir()) that a dead host left behind
 * (a `kill -9` runs no exit hook): named `klbr-<pid>-XXXXXX`, owned by this uid, their owner pid no
 * longer alive. A directory whose owner lives (or whose pid was reused) is left. Returns what was removed.
 */
export async function sweepPrivateDirs(base: string = tmpdir()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of names) {
    const owner = PRIVATE_DIR.exec(name);
    if (!owner || Number(owner[1]) === process.pid || isAlive(Number(owner[1]))) continue;
    const dir = join(base, name);
    try {
      const info = await lstat(dir);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
    } catch {
      continue;
    }
    await removePrivateDir(dir);
    removed.push(dir);
  }
  return removed;
}
