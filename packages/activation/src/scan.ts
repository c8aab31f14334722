import * as fs from "node:fs";
import * as path from "node:path";
import { digestEntries } from "./digest.js";
import { ActivationError, type ActivationErrorCode } from "./errors.js";
import { MAX_SOURCE_BYTES, MAX_SOURCE_FILES, SOURCE_EXTENSIONS } from "./limits.js";
import { isUtf8, showName } from "./names.js";

/** One admitted file of a source tree, read into memory. */
export interface SourceFile {
  /** The POSIX relative name, e.g. `pkg/mod.py`. */
  name: string;
  /** The UTF-8 bytes of `name` (what the digest hashes and sorts by). */
  nameBytes: Buffer;
  /** The exact content bytes. */
  content: Buffer;
}

/** What `sourceDigest` reports: the digest and the admitted files in digest order. */
export interface SourceDigest {
  /** 64 lowercase hex characters. */
  digest: string;
  /** Every admitted file, sorted by name bytes, with its size in bytes. */
  files: { name: string; size: number }[];
}

/**
 * Per-entry refusals, in precedence order: when a tree has several problems, the code that comes
 * first here wins, and among entries with that code the one whose relative name sorts first by
 * bytes. Python's klbr.digest applies the same rule, so both languages refuse a tree the same way.
 */
const ENTRY_PRECEDENCE: readonly ActivationErrorCode[] = [
  "SOURCE_BAD_NAME",
  "SOURCE_SYMLINK",
  "SOURCE_NOT_REGULAR",
  "SOURCE_CACHE",
  "SOURCE_EXTENSION",
  "SOURCE_EMPTY_DIRECTORY",
];

/** A walk visiting more entries than this stops at once with SOURCE_TOO_MANY_FILES, whatever else is wrong. */
export const MAX_WALK_ENTRIES = 4096;

const CACHE_HINT =
  "run source tests with `python -B` (or PYTHONDONTWRITEBYTECODE=1), or keep caches outside the draft";

const SLASH = Buffer.from("/");
const BACKSLASH = 0x5c;

/** What the walk asks of an entry; a Dirent answers without a syscall, lstat when the type was not reported. */
type EntryKind = Pick<fs.Stats, "isSymbolicLink" | "isDirectory" | "isFile">;

// Some file systems report DT_UNKNOWN, and then every Dirent type test is false.
function knowsType(d: fs.Dirent<Buffer>): boolean {
  return d.isSymbolicLink() || d.isDirectory() || d.isFile() || d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice();
}

interface Finding {
  code: ActivationErrorCode;
  rel: Buffer;
}

function findingMessage(code: ActivationErrorCode, shown: string): string {
  switch (code) {
    case "SOURCE_BAD_NAME":
      return `source name ${JSON.stringify(shown)} is not valid UTF-8 or contains a backslash`;
    case "SOURCE_SYMLINK":
      return `source entry ${JSON.stringify(shown)} is a symbolic link; sources may hold no symlinks`;
    case "SOURCE_NOT_REGULAR":
      return `source entry ${JSON.stringify(shown)} is not a regular file or directory`;
    case "SOURCE_CACHE":
      return `source entry ${JSON.stringify(shown)} is a Python bytecode cache; ${CACHE_HINT}`;
    case "SOURCE_EXTENSION":
      return `source file ${JSON.stringify(shown)} has an extension other than ${SOURCE_EXTENSIONS.join(" ")}`;
    case "SOURCE_EMPTY_DIRECTORY":
      return `source directory ${JSON.stringify(shown)} is empty; empty directories are not part of a digest`;
    // Unreachable: every caller passes one of the codes above; kept so that a new code still gets a message.
    // Stryker disable next-line all: unreachable (above)
    default:
      // Stryker disable next-line all: unreachable (above)
      return `source entry ${JSON.stringify(shown)} is refused (${code})`;
  }
}

function isCacheFile(name: string): boolean {
  return name.endsWith(".pyc") || name.endsWith(".pyo");
}

function hasAllowedExtension(name: string): boolean {
  return SOURCE_EXTENSIONS.some((ext) => name.endsWith(ext));
}

function rootError(code: ActivationErrorCode, message: string, cause?: unknown): ActivationError {
  return new ActivationError(code, message, { path: ".", cause });
}

function checkRoot(root: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      throw rootError("SOURCE_NOT_FOUND", `source root ${JSON.stringify(root)} does not exist`, error);
    }
    throw error;
  }
  if (stat.isSymbolicLink()) {
    throw rootError("SOURCE_SYMLINK", `source root ${JSON.stringify(root)} is a symbolic link; give the real directory`);
  }
  if (!stat.isDirectory()) {
    throw rootError("SOURCE_NOT_DIRECTORY", `source root ${JSON.stringify(root)} is not a directory`);
  }
}

/** Walk without following links; return the admissible file names, or throw the winning refusal. */
function walk(root: string): Buffer[] {
  const files: Buffer[] = [];
  const findings: Finding[] = [];
  const stack: Buffer[] = [Buffer.alloc(0)];
  let visited = 0;
  while (stack.length > 0) {
    const relDir = stack.pop()!;
    const absDir = relDir.length === 0 ? root : path.join(root, relDir.toString("utf8"));
    let dirents: fs.Dirent<Buffer>[];
    try {
      dirents = fs.readdirSync(absDir, { withFileTypes: true, encoding: "buffer" });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const shown = relDir.length === 0 ? "." : showName(relDir);
      throw new ActivationError("SOURCE_NOT_FOUND", `source directory ${JSON.stringify(shown)} vanished while it was read`, { path: shown, cause: error });
    }
    if (dirents.length === 0 && relDir.length > 0) findings.push({ code: "SOURCE_EMPTY_DIRECTORY", rel: relDir });
    for (const dirent of dirents) {
      visited += 1;
      if (visited > MAX_WALK_ENTRIES) {
        throw rootError(
          "SOURCE_TOO_MANY_FILES",
          `source root ${JSON.stringify(root)} holds more than ${MAX_WALK_ENTRIES} entries (at most ${MAX_SOURCE_FILES} files are admitted)`,
        );
      }
      const name = dirent.name;
      const rel = relDir.length === 0 ? Buffer.from(name) : Buffer.concat([relDir, SLASH, name]);
      if (!isUtf8(name) || name.includes(BACKSLASH)) {
        findings.push({ code: "SOURCE_BAD_NAME", rel });
        continue;
      }
      const kind: EntryKind = knowsType(dirent) ? dirent : fs.lstatSync(path.join(root, rel.toString("utf8")));
      const text = name.toString("utf8");
      if (kind.isSymbolicLink()) findings.push({ code: "SOURCE_SYMLINK", rel });
      else if (kind.isDirectory()) {
        if (text === "__pycache__") findings.push({ code: "SOURCE_CACHE", rel });
        else stack.push(rel);
      } else if (!kind.isFile()) findings.push({ code: "SOURCE_NOT_REGULAR", rel });
      else if (isCacheFile(text)) findings.push({ code: "SOURCE_CACHE", rel });
      else if (!hasAllowedExtension(text)) findings.push({ code: "SOURCE_EXTENSION", rel });
      else files.push(rel);
    }
  }
  if (findings.length > 0) {
    const rank = (code: ActivationErrorCode) => ENTRY_PRECEDENCE.indexOf(code);
    findings.sort((a, b) => rank(a.code) - rank(b.code) || Buffer.compare(a.rel, b.rel));
    const first = findings[0]!;
    const shown = showName(first.rel);
    throw new ActivationError(first.code, findingMessage(first.code, shown), { path: shown });
  }
  if (files.length > MAX_SOURCE_FILES) {
    throw rootError(
      "SOURCE_TOO_MANY_FILES",
      `source root ${JSON.stringify(root)} holds ${files.length} files; at most ${MAX_SOURCE_FILES} are admitted`,
    );
  }
  return files.sort(Buffer.compare);
}

function readAdmitted(root: string, rel: Buffer, budget: number): Buffer {
  const name = rel.toString("utf8");
  const flags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
  let fd: number;
  try {
    fd = fs.openSync(path.join(root, name), flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // The tree changed under the walk: report what the entry became.
    if (code === "ELOOP") throw new ActivationError("SOURCE_SYMLINK", findingMessage("SOURCE_SYMLINK", name), { path: name, cause: error });
    if (code === "ENOENT") throw new ActivationError("SOURCE_NOT_FOUND", `source file ${JSON.stringify(name)} vanished while it was read`, { path: name, cause: error });
    throw error;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new ActivationError("SOURCE_NOT_REGULAR", findingMessage("SOURCE_NOT_REGULAR", name), { path: name });
    if (stat.size > budget) return Buffer.alloc(budget + 1); // over the total either way; do not read it
    // Read into one buffer sized by fstat (plus one byte, to notice a file that grew meanwhile).
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, budget) + 1);
    let length = 0;
    for (;;) {
      const want = buffer.length - length;
      const n = fs.readSync(fd, buffer, length, want, null);
      length += n;
      if (n === 0 || (n < want && length === stat.size)) break; // a short read of a regular file is its end
      if (length === buffer.length) {
        if (length > budget) return buffer; // grew past the total budget
        const rest = fs.readFileSync(fd);
        return Buffer.concat([buffer, rest]);
      }
    }
    return buffer.subarray(0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Admit and read a behaviour source tree: every file sorted by name bytes, or an ActivationError
 * whose code follows the documented precedence and whose `path` names the offending entry.
 */
export function scanSource(given: string): SourceFile[] {
  // Without trailing slashes: lstat("link/") would follow the link and miss a symlinked root.
  const root = path.resolve(given);
  checkRoot(root);
  const names = walk(root);
  const out: SourceFile[] = [];
  let total = 0;
  for (const rel of names) {
    const content = readAdmitted(root, rel, MAX_SOURCE_BYTES - total);
    total += content.length;
    if (total > MAX_SOURCE_BYTES) {
      throw rootError(
        "SOURCE_TOO_LARGE",
        `source root ${JSON.stringify(root)} holds more than ${MAX_SOURCE_BYTES} bytes (2 MiB) of files`,
      );
    }
    out.push({ name: rel.toString("utf8"), nameBytes: rel, content });
  }
  return out;
}

/** The digest of admitted, in-memory source files (sorted or not), with their names and sizes. */
export function digestSourceFiles(files: readonly SourceFile[]): SourceDigest {
  const digest = digestEntries(files.map((f) => ({ name: f.nameBytes, content: f.content })));
  const sorted = [...files].sort((a, b) => Buffer.compare(a.nameBytes, b.nameBytes));
  return { digest, files: sorted.map((f) => ({ name: f.name, size: f.content.length })) };
}

/** Admit the tree at `root` and compute its source digest and file list. */
export function sourceDigest(root: string): SourceDigest {
  return digestSourceFiles(scanSource(root));
}
