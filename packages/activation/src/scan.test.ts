import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, buildTree, cachedTree, expand, loadVectors, refusal, scratchDirs, type TreeEntry } from "../test/helpers/tree.js";
import { MAX_SOURCE_BYTES } from "./limits.js";
import { scanSource, sourceDigest } from "./scan.js";

type TreeInput = { root?: string; tree?: TreeEntry[] };

const base = scratchDirs();

describe("admitted trees (fixtures/digest/trees.json)", () => {
  for (const c of loadVectors<TreeInput, { digest: string; files: { name: string; size: number }[] }>("digest/trees.json")) {
    it(c.description, () => {
      const root = treeOf(c.input);
      expect(sourceDigest(root)).toEqual(c.expected);
    });
  }
});

/** A vector's tree: built fresh, or, for the few thousand entries of the walk's limit, once (cachedTree). */
function treeOf(input: TreeInput): string {
  return expand(input.tree ?? []).length > 1024 ? cachedTree(input) : buildTree(base(), input);
}

describe("refused trees (fixtures/digest/refusals.json)", () => {
  for (const c of loadVectors<TreeInput>("digest/refusals.json")) {
    it(c.description, () => {
      const root = treeOf(c.input);
      const got = refusal(() => scanSource(root));
      expect({ code: got.code, path: got.path }).toEqual(c.error);
      if (got.path !== ".") expect(got.message).toContain(JSON.stringify(got.path));
    });
  }
});

describe("the default behaviour source (fixtures/behavior.json)", () => {
  const pinned = JSON.parse(fs.readFileSync(path.join(REPO, "fixtures/behavior.json"), "utf8")) as {
    path: string;
    digest: string;
    files: string[];
  };
  const root = path.join(REPO, pinned.path);

  it("has no bytecode cache (run Python with -B)", () => {
    const cache = path.join(root, "__pycache__");
    expect(fs.existsSync(cache), `${cache} exists: Python ran without -B; delete it`).toBe(false);
  });

  it("digests to the pinned value with the pinned files", () => {
    const got = sourceDigest(root);
    expect(got.files.map((f) => f.name)).toEqual(pinned.files);
    expect(got.digest).toBe(pinned.digest);
  });
});

describe("scanSource", () => {
  it("returns files sorted by name bytes with their content", () => {
    const root = base();
    fs.mkdirSync(path.join(root, "a"));
    fs.writeFileSync(path.join(root, "b.py"), "2");
    fs.writeFileSync(path.join(root, "a", "z.md"), "1");
    const files = scanSource(root);
    expect(files.map((f) => [f.name, f.content.toString()])).toEqual([
      ["a/z.md", "1"],
      ["b.py", "2"],
    ]);
  });

  it("tells how to avoid a cache refusal", () => {
    const root = base();
    fs.mkdirSync(path.join(root, "__pycache__"));
    fs.writeFileSync(path.join(root, "__pycache__", "m.cpython-311.pyc"), "\0");
    const got = refusal(() => scanSource(root));
    expect(got.code).toBe("SOURCE_CACHE");
    expect(got.message).toContain("python -B");
    expect(got.message).toContain("outside the draft");
  });

  it("does not read a file past the size budget", () => {
    const root = base();
    fs.writeFileSync(path.join(root, "big.md"), Buffer.alloc(MAX_SOURCE_BYTES * 4, 0x61));
    expect(refusal(() => scanSource(root)).code).toBe("SOURCE_TOO_LARGE");
  });

  it("names the root in root refusals", () => {
    const missing = path.join(base(), "nope");
    const got = refusal(() => scanSource(missing));
    expect(got).toMatchObject({ code: "SOURCE_NOT_FOUND", path: "." });
    expect(got.message).toContain(missing);
  });
});

describe("root spelling", () => {
  it("a symlinked root is refused even when given with a trailing slash", () => {
    const dir = base();
    fs.mkdirSync(path.join(dir, "real"));
    fs.writeFileSync(path.join(dir, "real", "a.py"), "");
    fs.symlinkSync(path.join(dir, "real"), path.join(dir, "link"));
    expect(refusal(() => scanSource(`${path.join(dir, "link")}/`))).toMatchObject({ code: "SOURCE_SYMLINK", path: "." });
    expect(sourceDigest(`${path.join(dir, "real")}/`)).toEqual(sourceDigest(path.join(dir, "real")));
  });
});

describe("the default source as a release", () => {
  it("snapshots python/klbr_hooks into a release whose name is the pinned digest", async () => {
    const { snapshotRelease } = await import("./release.js");
    const pinned = JSON.parse(fs.readFileSync(path.join(REPO, "fixtures/behavior.json"), "utf8")) as { path: string; digest: string };
    const snap = snapshotRelease(path.join(REPO, pinned.path), path.join(base(), "releases"));
    expect(path.basename(snap.path)).toBe(pinned.digest);
    expect(snap.manifest.hooks).toEqual({ "attention.plan": "klbr_hooks.defaults:attention", "delivery.review": "klbr_hooks.defaults:delivery" });
  });
});
