// Property: for random trees on disk, @klbr/activation and Python's klbr.digest give the same
// verdict: the same digest and file list for admitted trees, the same code and path for refused ones.
import fc from "fast-check";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isActivationError, sourceDigest } from "../src/index.js";
import { pythonVerdicts, type Verdict } from "./helpers/python.js";
import { removeDir, tempDir } from "./helpers/tree.js";

type Entry = { dirs: Buffer[]; stem: Buffer; ext: string; kind: "file" | "symlink" | "empty-dir"; content: Uint8Array };

const PIECES = ["a", "b", "Z", "0", "_", "-", ".", "\u00e9", "\u65e5", "\uFF61", "\u{1F600}"];
const text = (pieces: string[]) => fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 4 }).map((p) => p.join(""));
const goodSegment = text(PIECES)
  .filter((s) => s !== "." && s !== ".." && s !== "__pycache__")
  .map((s) => Buffer.from(s));
const anySegment = fc.oneof(
  { weight: 12, arbitrary: goodSegment },
  { weight: 1, arbitrary: text([...PIECES, "\\"]).filter((s) => s.includes("\\")).map((s) => Buffer.from(s)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.from([0xff]), Buffer.from([0x61, 0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80])) },
  { weight: 1, arbitrary: fc.constant(Buffer.from("__pycache__")) },
);

const admittedEntry: fc.Arbitrary<Entry> = fc.record({
  dirs: fc.array(goodSegment, { maxLength: 2 }),
  stem: goodSegment,
  ext: fc.constantFrom(".py", ".json", ".md"),
  kind: fc.constant("file" as const),
  content: fc.uint8Array({ maxLength: 48 }),
});
const anyEntry: fc.Arbitrary<Entry> = fc.record({
  dirs: fc.array(anySegment, { maxLength: 2 }),
  stem: anySegment,
  ext: fc.constantFrom(".py", ".json", ".md", ".py", ".txt", ".pyc", ""),
  kind: fc.constantFrom("file", "file", "file", "file", "file", "symlink", "empty-dir"),
  content: fc.uint8Array({ maxLength: 16 }),
});

/** Write entries in the given order; an entry that collides with an earlier one (file vs folder) is skipped. */
function write(root: string, entries: Entry[]): void {
  fs.mkdirSync(root);
  for (const e of entries) {
    const rel = Buffer.concat([...e.dirs.flatMap((d) => [d, Buffer.from("/")]), e.stem, Buffer.from(e.ext)]);
    const full = Buffer.concat([Buffer.from(root + "/"), rel]);
    try {
      fs.mkdirSync(full.subarray(0, full.lastIndexOf(0x2f)), { recursive: true });
      if (e.kind === "file") fs.writeFileSync(full, e.content, { flag: "wx" });
      else if (e.kind === "symlink") fs.symlinkSync("target.py", full);
      else fs.mkdirSync(full);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A folder path through a file or a (dangling) symlink made earlier in this tree.
      if (code !== "EEXIST" && code !== "ENOTDIR" && code !== "ENOENT") throw error;
    }
  }
}

function tsVerdict(root: string): Verdict {
  try {
    return sourceDigest(root);
  } catch (error) {
    if (isActivationError(error)) return { code: error.code, path: error.path ?? null };
    throw error;
  }
}

describe("TypeScript and Python agree (random trees, one Python process per batch)", () => {
  const base = tempDir();
  afterAll(() => removeDir(base), 60_000);
  let batch = 0;

  const check = (trees: Entry[][]) => {
    const prefix = `b${batch++}`; // a fresh folder per run, also when a run fails and fast-check shrinks
    const roots = trees.map((entries, i) => {
      const root = path.join(base, `${prefix}-t${i}`);
      write(root, entries);
      return root;
    });
    const ours = roots.map(tsVerdict);
    const theirs = pythonVerdicts(roots);
    expect(theirs).toEqual(ours);
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
    return ours;
  };

  it("on admitted trees: same digest and files", () => {
    let admitted = 0;
    fc.assert(
      fc.property(fc.array(fc.array(admittedEntry, { minLength: 1, maxLength: 10 }), { minLength: 25, maxLength: 25 }), (trees) => {
        admitted += check(trees).filter((v) => "digest" in v).length;
      }),
      { numRuns: 6 },
    );
    expect(admitted).toBeGreaterThan(50); // the property really compared digests, not only refusals
  }, 120_000); // one Python start per run: slow when CI runs every package at once on 2 cores

  it("on trees with bad names, symlinks, caches, wrong extensions and empty folders: same verdict", () => {
    const codes = new Set<string>();
    fc.assert(
      fc.property(fc.array(fc.array(anyEntry, { minLength: 1, maxLength: 8 }), { minLength: 30, maxLength: 30 }), (trees) => {
        for (const v of check(trees)) if ("code" in v) codes.add(v.code);
      }),
      { numRuns: 8 },
    );
    expect(codes.size).toBeGreaterThanOrEqual(4); // several refusal kinds were really compared
  }, 120_000);
});
