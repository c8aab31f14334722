// Test helpers: materialize the tree vectors of fixtures/digest/ (format in fixtures/digest/README.md).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { type ActivationError, isActivationError } from "../../src/errors.js";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../../../", import.meta.url));

/** The shared fixtures folder. */
export const FIXTURES = path.join(REPO, "fixtures");

/** One vector case. */
export interface Case<I = any, E = any> {
  description: string;
  input: I;
  expected?: E;
  error?: { code: string; path?: string; field?: string };
}

/** Load the cases of one fixtures file (relative to fixtures/). */
export function loadVectors<I = any, E = any>(relative: string): Case<I, E>[] {
  const data = JSON.parse(fs.readFileSync(path.join(FIXTURES, relative), "utf8"));
  const cases = Array.isArray(data) ? data : data.cases;
  if (!Array.isArray(cases) || cases.length === 0) throw new Error(`${relative} holds no cases`);
  return cases;
}

/** One entry of a vector tree. */
export interface TreeEntry {
  name?: string;
  name_hex?: string;
  text?: string;
  hex?: string;
  fill?: { byte: number; size: number };
  symlink?: string;
  directory?: boolean;
  fifo?: boolean;
  repeat?: number;
}

/** The raw name bytes of an entry. */
export function entryName(entry: TreeEntry): Buffer {
  return entry.name_hex !== undefined ? Buffer.from(entry.name_hex, "hex") : Buffer.from(entry.name!, "utf8");
}

/** The content bytes of a file entry. */
export function entryContent(entry: TreeEntry): Buffer {
  if (entry.text !== undefined) return Buffer.from(entry.text, "utf8");
  if (entry.hex !== undefined) return Buffer.from(entry.hex, "hex");
  if (entry.fill !== undefined) return Buffer.alloc(entry.fill.size, entry.fill.byte);
  throw new Error(`entry has no content: ${JSON.stringify(entry)}`);
}

/** Expand `repeat` entries; `{i}` becomes the index zero-padded to 4 digits. */
export function expand(tree: readonly TreeEntry[]): TreeEntry[] {
  return tree.flatMap((entry) => {
    if (entry.repeat === undefined) return [entry];
    const { repeat, ...rest } = entry;
    return Array.from({ length: repeat }, (_, i) => ({ ...rest, name: entry.name!.replace("{i}", String(i).padStart(4, "0")) }));
  });
}

/** A fresh temporary directory. */
export function tempDir(prefix = "klbr-activation-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Remove a directory tree, read-only modes included. */
export function removeDir(dir: string): void {
  if (!fs.existsSync(dir)) return;
  execFileSync("chmod", ["-R", "u+w", dir]);
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Scratch directories for the tests of one file (call it at top level) or one describe (call it in
 * its body): registers an afterEach that removes every directory made since, and returns the maker.
 * Call the maker inside tests or hooks only, never while vitest collects them.
 */
export function scratchDirs(): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) removeDir(dir);
  });
  return () => {
    const dir = tempDir();
    made.push(dir);
    return dir;
  };
}

/** The ActivationError `fn` throws; any other error is rethrown, and returning fails the test. */
export function refusal(fn: () => unknown): ActivationError {
  try {
    fn();
  } catch (error) {
    if (isActivationError(error)) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** Create the tree a vector describes under `base`; return the root to scan. */
export function buildTree(base: string, input: { root?: string; tree?: TreeEntry[] }): string {
  const kind = input.root ?? "directory";
  if (kind === "missing") return path.join(base, "missing");
  if (kind === "file") {
    fs.writeFileSync(path.join(base, "file"), "not a directory");
    return path.join(base, "file");
  }
  const real = Buffer.from(path.join(base, "real"));
  fs.mkdirSync(real);
  for (const entry of expand(input.tree ?? [])) {
    const full = Buffer.concat([real, Buffer.from("/"), entryName(entry)]);
    const slash = full.lastIndexOf(0x2f);
    fs.mkdirSync(full.subarray(0, slash), { recursive: true });
    if (entry.symlink !== undefined) fs.symlinkSync(entry.symlink, full);
    else if (entry.directory) fs.mkdirSync(full, { recursive: true });
    else if (entry.fifo) execFileSync("mkfifo", [full.toString("utf8")]);
    else fs.writeFileSync(full, entryContent(entry));
  }
  if (kind === "symlink") {
    fs.symlinkSync(real, path.join(base, "root"));
    return path.join(base, "root");
  }
  return real.toString("utf8");
}

/** Write a valid source (manifest + module) into `dir`, with `extra` files on top. */
export function writeSource(dir: string, extra: Record<string, string> = {}): void {
  const files: Record<string, string> = {
    "manifest.json": JSON.stringify({ version: 1, hooks: { "attention.plan": "pol.main:attention", "delivery.review": "pol.main:delivery" } }),
    "main.py": "def attention(r, c):\n    pass\n\ndef delivery(r, c):\n    pass\n",
    ...extra,
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/**
 * The tree a large vector describes, built once per machine into this package's
 * node_modules/.cache and reused (read only) by every later run. The 4,097-entry vector took
 * 8 s to write and delete, and `pnpm mutate activation` runs it once for each of the ~270 mutants
 * of the walk. The directory is named by a digest of the vector's input and is renamed into place
 * only once complete, so a reused tree is always the whole tree of that input.
 */
export function cachedTree(input: { root?: string; tree?: TreeEntry[] }): string {
  const cache = fileURLToPath(new URL("../../node_modules/.cache/klbr-activation-trees/", import.meta.url));
  const key = createHash("sha256").update(JSON.stringify(input)).digest("hex").slice(0, 32);
  const dir = path.join(cache, key);
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(cache, { recursive: true });
    const building = fs.mkdtempSync(path.join(cache, `${key}.building-`));
    buildTree(building, input);
    try {
      fs.renameSync(building, dir);
    } catch (error) {
      removeDir(building);
      // Another run put the same tree there first.
      if (!fs.existsSync(dir)) throw error;
    }
  }
  return buildTreeRoot(dir, input);
}

/** Where buildTree(base, input) puts the root it returns, for a tree that is already there. */
function buildTreeRoot(base: string, input: { root?: string }): string {
  const kind = input.root ?? "directory";
  if (kind === "missing") return path.join(base, "missing");
  if (kind === "file") return path.join(base, "file");
  if (kind === "symlink") return path.join(base, "root");
  return path.join(base, "real");
}
