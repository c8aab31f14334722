// The exact words of every tree refusal (the vectors pin codes and paths; an operator reads these),
// and the walk's entry limit at the limit itself.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { buildTree, cachedTree, refusal, scratchDirs, type TreeEntry } from "../test/helpers/tree.js";
import { scanSource } from "./scan.js";

const base = scratchDirs();

/** The refusal of scanSource(root) as plain fields, so the cases below can compare it whole (toEqual). */
function refusalOf(root: string): { code: string; path: string | undefined; message: string } {
  const got = refusal(() => scanSource(root));
  return { code: got.code, path: got.path, message: got.message };
}

const tree = (entries: TreeEntry[], root?: string) => buildTree(base(), { tree: entries, root });

describe("entry refusals say what is wrong and what to do", () => {
  const cases: [string, TreeEntry[], string, string][] = [
    ["a backslash", [{ name: "a\\b.py", text: "" }], "SOURCE_BAD_NAME", 'source name "a\\\\b.py" is not valid UTF-8 or contains a backslash'],
    ["a symlink", [{ name: "a.py", text: "" }, { name: "l.py", symlink: "a.py" }], "SOURCE_SYMLINK", 'source entry "l.py" is a symbolic link; sources may hold no symlinks'],
    ["a FIFO", [{ name: "p.py", fifo: true }], "SOURCE_NOT_REGULAR", 'source entry "p.py" is not a regular file or directory'],
    [
      "a .pyo file",
      [{ name: "m.pyo", hex: "00" }],
      "SOURCE_CACHE",
      'source entry "m.pyo" is a Python bytecode cache; run source tests with `python -B` (or PYTHONDONTWRITEBYTECODE=1), or keep caches outside the draft',
    ],
    ["a .txt file", [{ name: "n.txt", text: "" }], "SOURCE_EXTENSION", 'source file "n.txt" has an extension other than .py .json .md'],
    ["an empty directory", [{ name: "a.py", text: "" }, { name: "e", directory: true }], "SOURCE_EMPTY_DIRECTORY", 'source directory "e" is empty; empty directories are not part of a digest'],
  ];
  for (const [what, entries, code, message] of cases) {
    it(`${what}: ${code}`, () => {
      expect(refusalOf(tree(entries))).toMatchObject({ code, message });
    });
  }
});

describe("root refusals name the root", () => {
  it("a symlinked root", () => {
    const root = tree([{ name: "a.py", text: "" }], "symlink");
    expect(refusalOf(root)).toEqual({ code: "SOURCE_SYMLINK", path: ".", message: `source root ${JSON.stringify(root)} is a symbolic link; give the real directory` });
  });

  it("a root that is a file", () => {
    const root = tree([], "file");
    expect(refusalOf(root)).toEqual({ code: "SOURCE_NOT_DIRECTORY", path: ".", message: `source root ${JSON.stringify(root)} is not a directory` });
  });

  it("129 files", () => {
    const root = tree([{ name: "f{i}.py", text: "", repeat: 129 }]);
    expect(refusalOf(root)).toEqual({ code: "SOURCE_TOO_MANY_FILES", path: ".", message: `source root ${JSON.stringify(root)} holds 129 files; at most 128 are admitted` });
  });

  it("one byte over 2 MiB", () => {
    const root = tree([{ name: "big.md", fill: { byte: 0x61, size: 2 * 1024 * 1024 + 1 } }]);
    expect(refusalOf(root)).toEqual({ code: "SOURCE_TOO_LARGE", path: ".", message: `source root ${JSON.stringify(root)} holds more than 2097152 bytes (2 MiB) of files` });
  });
});

describe("the walk's entry limit (4096)", () => {
  it("exactly 4096 entries are all visited: the file count refuses them, not the walk", () => {
    const root = cachedTree({ tree: [{ name: "t{i}.py", text: "", repeat: 4096 }] });
    expect(fs.readdirSync(root)).toHaveLength(4096);
    expect(refusalOf(root)).toEqual({ code: "SOURCE_TOO_MANY_FILES", path: ".", message: `source root ${JSON.stringify(root)} holds 4096 files; at most 128 are admitted` });
  });

  it("4097 stop the walk, with its own message", () => {
    const root = cachedTree({ tree: [{ name: "t{i}.txt", text: "", repeat: 4097 }] });
    expect(path.basename(root)).toBe("real");
    expect(refusalOf(root)).toEqual({
      code: "SOURCE_TOO_MANY_FILES",
      path: ".",
      message: `source root ${JSON.stringify(root)} holds more than 4096 entries (at most 128 files are admitted)`,
    });
  });
});
