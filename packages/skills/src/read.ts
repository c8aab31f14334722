import { constants } from "node:fs";
import { lstat, open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { MAX_SKILL_BYTES, SKILL_FILE_NAME } from "./constants";

/** What reading one skill directory's SKILL.md found on disk. */
export type SkillFileRead =
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "symlink" }
  | { kind: "missing" }
  | { kind: "oversize" }
  | { kind: "unreadable"; code: string };

function errorCode(error: unknown): string | undefined {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, node:fs/promises always rejects with an Error object
  return typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined;
}

/**
 * Read `<dir>/SKILL.md` without following a symlink and without reading more than
 * MAX_SKILL_BYTES + 1 bytes: a huge file costs one bounded read, not its size.
 * A missing file, or one that is not a regular file (a directory named SKILL.md), is `missing`.
 * A file that cannot be opened or read (permissions, an I/O error) is `unreadable` (C4): that
 * one skill is refused, the index of the others stands.
 */
export async function readSkillFile(dir: string): Promise<SkillFileRead> {
  const path = join(dir, SKILL_FILE_NAME);
  let handle;
  try {
    // O_NOFOLLOW closes the window between an lstat and the open: a symlink fails with ELOOP.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = errorCode(error);
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: equivalent on Linux, a symlink missed here is caught by the lstat fallback below (EMLINK is FreeBSD's spelling, never seen here)
    if (code === "ELOOP" || code === "EMLINK") return { kind: "symlink" };
    if (
      code === "ENOENT" ||
      code === "ENOTDIR" ||
      // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent on Linux, a directory opens read-only (readBounded reports it missing), so EISDIR never occurs
      code === "EISDIR"
    ) {
      return { kind: "missing" };
    }
    // Some platforms report a symlink opened with O_NOFOLLOW differently; ask lstat.
    const info = await lstat(path).catch(() => undefined);
    // Stryker disable next-line ConditionalExpression,ObjectLiteral,StringLiteral: equivalent on Linux, O_NOFOLLOW reports a symlink as ELOOP above, so this fallback only answers on other platforms
    if (info?.isSymbolicLink()) return { kind: "symlink" };
    // Stryker disable next-line StringLiteral: unreachable, a rejection of open always carries a system code
    return { kind: "unreadable", code: code ?? "unknown" };
  }
  try {
    return await readBounded(handle);
  } catch (error) {
    return { kind: "unreadable", code: errorCode(error) ?? "unknown" };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Read at most MAX_SKILL_BYTES + 1 bytes of an open SKILL.md. */
async function readBounded(handle: FileHandle): Promise<SkillFileRead> {
  const info = await handle.stat();
  if (!info.isFile()) return { kind: "missing" };
  const limit = MAX_SKILL_BYTES + 1;
  const buffer = Buffer.alloc(limit);
  let filled = 0;
  // Stryker disable next-line EqualityOperator: equivalent, at filled === limit one more read asks for 0 bytes, reads 0 and breaks
  while (filled < limit) {
    const { bytesRead } = await handle.read(buffer, filled, limit - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  if (filled > MAX_SKILL_BYTES) return { kind: "oversize" };
  return { kind: "bytes", bytes: buffer.subarray(0, filled) };
}
