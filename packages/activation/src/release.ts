import * as fs from "node:fs";
import * as path from "node:path";
import { ActivationError, isActivationError } from "./errors.js";
import { DIGEST_PATTERN, MANIFEST_FILE } from "./limits.js";
import { decodeManifest, type Manifest } from "./manifest.js";
import { digestSourceFiles, scanSource, type SourceFile } from "./scan.js";
import { sweepStaleTemps, tempPrefix } from "./temp-dirs.js";

/** A verified release: its digest is its directory name and the digest of its tree. */
export interface Release {
  /** 64 lowercase hex characters; also the directory name. */
  digest: string;
  /** The release directory, `<releasesDir>/<digest>`. */
  path: string;
  /** The admitted files, sorted by name bytes, with their sizes. */
  files: { name: string; size: number }[];
  /** The validated manifest. */
  manifest: Manifest;
}

/** What `snapshotRelease` returns: the release, and whether an identical one already existed. */
export interface Snapshot extends Release {
  /** True when `releases/<digest>` already held these bytes and was reused. */
  reused: boolean;
}

const FILE_MODE = 0o444;
const DIR_MODE = 0o555;

function manifestOf(files: readonly SourceFile[], where: string): Manifest {
  const file = files.find((f) => f.name === MANIFEST_FILE);
  if (file === undefined) {
    throw new ActivationError("MANIFEST_MISSING", `${JSON.stringify(path.join(where, MANIFEST_FILE))} does not exist`, { field: "$", path: MANIFEST_FILE });
  }
  return decodeManifest(file.content);
}

/** Admit and digest the tree at `dir`, and validate its manifest. */
function inspect(dir: string): Omit<Release, "path"> {
  const files = scanSource(dir);
  const manifest = manifestOf(files, dir);
  const { digest, files: listed } = digestSourceFiles(files);
  return { digest, files: listed, manifest };
}

/**
 * Check that `releasePath` is a release: its name is a digest, its tree is admitted, its digest
 * equals its name, and its manifest is valid. Called before any release is trusted.
 */
export function verifyRelease(releasePath: string): Release {
  const name = path.basename(releasePath);
  if (!DIGEST_PATTERN.test(name)) {
    throw new ActivationError("RELEASE_BAD_NAME", `release directory name ${JSON.stringify(name)} is not a 64-character lowercase hex digest`, { path: releasePath });
  }
  const found = inspect(releasePath);
  if (found.digest !== name) {
    throw new ActivationError("RELEASE_DIGEST_MISMATCH", `release ${JSON.stringify(releasePath)} holds a tree with digest ${found.digest}, not its name`, { path: releasePath });
  }
  return { ...found, path: releasePath };
}

/** fsync a directory, so the entries written in it survive a crash. */
function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Write the files under `dir` (each fsynced), then fsync every directory of the tree, deepest first:
 * without that, a crash after the rename could leave a release whose files lost their entries.
 */
function writeTree(dir: string, files: readonly SourceFile[]): void {
  const dirs = new Set<string>([dir]);
  for (const file of files) {
    const target = path.join(dir, file.name);
    for (let d = path.dirname(target); d !== dir && !dirs.has(d); d = path.dirname(d)) dirs.add(d);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const fd = fs.openSync(target, "wx", FILE_MODE);
    try {
      fs.writeFileSync(fd, file.content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) syncDirectory(d);
}

/** Set every file under `dir` to `fileMode` and every directory to `dirMode` (the root directory too when asked). */
function setModes(dir: string, fileMode: number, dirMode: number, includeRoot: boolean): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) setModes(full, fileMode, dirMode, true);
    else if (entry.isFile()) fs.chmodSync(full, fileMode);
  }
  if (includeRoot) fs.chmodSync(dir, dirMode);
}

/** Remove a tree this module wrote, read-only modes included. */
function removeTree(dir: string): void {
  try {
    setModes(dir, 0o644, 0o755, true);
  } catch {
    // Best effort: rmSync reports what it cannot remove.
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Verify an existing `releases/<digest>` (its name is the digest, so verifying it proves the bytes) and re-assert its read-only modes. */
function reuse(target: string): Snapshot {
  let release: Release;
  try {
    release = verifyRelease(target);
  } catch (error) {
    const detail = isActivationError(error) ? `${error.code}: ${error.message}` : String(error);
    throw new ActivationError("RELEASE_CORRUPT", `existing release ${JSON.stringify(target)} does not verify (${detail}); move it aside and snapshot again`, { path: target, cause: error });
  }
  setModes(target, FILE_MODE, DIR_MODE, true);
  return { ...release, reused: true };
}

/**
 * Snapshot the draft directory into `<releasesDir>/<digest>`: admit and read the draft once, write
 * those bytes into a temporary directory inside releasesDir, check the copy (admission, manifest,
 * same digest), make it read-only (files 0444, directories 0555) and rename it into place. The
 * same bytes again reuse the existing release after verifying it.
 */
export function snapshotRelease(draftDir: string, releasesDir: string): Snapshot {
  const files = scanSource(draftDir);
  manifestOf(files, draftDir);
  const { digest } = digestSourceFiles(files);
  fs.mkdirSync(releasesDir, { recursive: true });
  sweepStaleTemps(releasesDir, removeTree);
  const target = path.join(releasesDir, digest);
  if (fs.existsSync(target)) return reuse(target);

  const temp = fs.mkdtempSync(tempPrefix(releasesDir));
  try {
    writeTree(temp, files);
    const copy = inspect(temp);
    if (copy.digest !== digest) {
      throw new ActivationError("RELEASE_DIGEST_MISMATCH", `the copy of ${JSON.stringify(draftDir)} has digest ${copy.digest}, the draft ${digest}`, { path: temp });
    }
    setModes(temp, FILE_MODE, DIR_MODE, false);
    try {
      fs.renameSync(temp, target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another snapshot of the same bytes won the rename: use (and verify) theirs.
      if (code === "ENOTEMPTY" || code === "EEXIST") {
        removeTree(temp);
        return reuse(target);
      }
      throw error;
    }
    fs.chmodSync(target, DIR_MODE);
    syncDirectory(releasesDir);
    return { ...copy, path: target, reused: false };
  } catch (error) {
    if (fs.existsSync(temp)) removeTree(temp);
    throw error;
  }
}
