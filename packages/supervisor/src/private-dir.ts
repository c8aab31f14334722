import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SupervisorError } from "./errors.js";

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

/** Create a fresh 0700 directory under `base` (default os.tmpdir()) holding `w.sock`'s path. */
export async function makePrivateDir(base: string = tmpdir()): Promise<PrivateDir> {
  const dir = await mkdtemp(join(base, "klbr-"));
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
