import { cpSync, lstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { snapshotRelease } from "@klbr/activation";

/**
 * Release the host's own default behaviour source from a pristine copy of it. The source sits
 * beside the `klbr` package, so any Python that imported `klbr_hooks` from there without `-B`
 * (a test run, a pip install that compiled it) left a `__pycache__` directory next to it; the
 * copy leaves out exactly those directories, and everything else (a stray `.pyc`, a symlink, a
 * FIFO) reaches the snapshot, whose limits stand as they do for any draft.
 */
export function snapshotDefaultSource(source: string, releasesDir: string): ReturnType<typeof snapshotRelease> {
  const scratch = mkdtempSync(join(tmpdir(), "klbr-default-"));
  try {
    const copy = join(scratch, "source");
    cpSync(source, copy, { recursive: true, verbatimSymlinks: true, filter: (path) => !isBytecodeCache(path) });
    return snapshotRelease(copy, releasesDir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function isBytecodeCache(path: string): boolean {
  if (basename(path) !== "__pycache__") return false;
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
