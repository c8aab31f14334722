import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeDir, tempDir, writeSource } from "../test/helpers/tree.js";
import { isActivationError } from "./errors.js";
import { snapshotRelease, verifyRelease } from "./release.js";
import { sourceDigest } from "./scan.js";

const dirs: string[] = [];
function fresh(): { draft: string; releases: string } {
  const base = tempDir();
  dirs.push(base);
  const draft = path.join(base, "draft");
  fs.mkdirSync(draft);
  writeSource(draft, { "pol/__init__.py": "", "README.md": "# pol\n" });
  return { draft, releases: path.join(base, "releases") };
}
afterEach(() => dirs.splice(0).forEach(removeDir));

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isActivationError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

function modes(dir: string): string[] {
  const out: string[] = [];
  const visit = (p: string, rel: string) => {
    const st = fs.lstatSync(p);
    out.push(`${rel} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of fs.readdirSync(p).sort()) visit(path.join(p, name), rel === "." ? name : `${rel}/${name}`);
  };
  visit(dir, ".");
  return out;
}

describe("snapshotRelease", () => {
  it("copies the draft to releases/<digest>, read-only, with the draft's digest", () => {
    const { draft, releases } = fresh();
    const snap = snapshotRelease(draft, releases);
    expect(snap.digest).toBe(sourceDigest(draft).digest);
    expect(snap.path).toBe(path.join(releases, snap.digest));
    expect(snap.reused).toBe(false);
    expect(snap.manifest.hooks["attention.plan"]).toBe("pol.main:attention");
    expect(sourceDigest(snap.path).digest).toBe(snap.digest);
    expect(modes(snap.path)).toEqual([". 555", "README.md 444", "main.py 444", "manifest.json 444", "pol 555", "pol/__init__.py 444"]);
    expect(fs.readdirSync(releases)).toEqual([snap.digest]); // no temporary left behind
  });

  it("reuses the release for the same bytes, and makes a new one when a byte changes", () => {
    const { draft, releases } = fresh();
    const first = snapshotRelease(draft, releases);
    const again = snapshotRelease(draft, releases);
    expect(again).toMatchObject({ digest: first.digest, path: first.path, reused: true });
    fs.appendFileSync(path.join(draft, "main.py"), "# changed\n");
    const changed = snapshotRelease(draft, releases);
    expect(changed.reused).toBe(false);
    expect(changed.digest).not.toBe(first.digest);
    expect(fs.readdirSync(releases).sort()).toEqual([first.digest, changed.digest].sort());
  });

  it("refuses to reuse a tampered release", () => {
    const { draft, releases } = fresh();
    const snap = snapshotRelease(draft, releases);
    fs.chmodSync(path.join(snap.path), 0o755);
    fs.chmodSync(path.join(snap.path, "main.py"), 0o644);
    fs.appendFileSync(path.join(snap.path, "main.py"), "import os\n");
    expect(code(() => snapshotRelease(draft, releases))).toBe("RELEASE_CORRUPT");
  });

  it("refuses a draft that is not admitted or has no valid manifest, leaving nothing behind", () => {
    const { draft, releases } = fresh();
    fs.writeFileSync(path.join(draft, "notes.txt"), "x");
    expect(code(() => snapshotRelease(draft, releases))).toBe("SOURCE_EXTENSION");
    fs.rmSync(path.join(draft, "notes.txt"));
    fs.writeFileSync(path.join(draft, "manifest.json"), JSON.stringify({ version: 2, hooks: {} }));
    expect(code(() => snapshotRelease(draft, releases))).toBe("MANIFEST_BAD_VERSION");
    fs.rmSync(path.join(draft, "manifest.json"));
    expect(code(() => snapshotRelease(draft, releases))).toBe("MANIFEST_MISSING");
    expect(fs.existsSync(releases) ? fs.readdirSync(releases) : []).toEqual([]);
  });
});

describe("verifyRelease", () => {
  it("accepts a snapshot and reports its files", () => {
    const { draft, releases } = fresh();
    const snap = snapshotRelease(draft, releases);
    const release = verifyRelease(snap.path);
    expect(release.digest).toBe(snap.digest);
    expect(release.files.map((f) => f.name)).toEqual(["README.md", "main.py", "manifest.json", "pol/__init__.py"]);
  });

  it("refuses a directory whose name is not a digest", () => {
    const { draft } = fresh();
    expect(code(() => verifyRelease(draft))).toBe("RELEASE_BAD_NAME");
    const upper = path.join(path.dirname(draft), "A".repeat(64));
    fs.cpSync(draft, upper, { recursive: true });
    expect(code(() => verifyRelease(upper))).toBe("RELEASE_BAD_NAME");
  });

  it("detects tampering: a changed byte, an added file, a removed file, a renamed release", () => {
    const { draft, releases } = fresh();
    const snap = snapshotRelease(draft, releases);
    const writable = () => {
      fs.chmodSync(snap.path, 0o755);
      fs.chmodSync(path.join(snap.path, "README.md"), 0o644);
    };
    writable();
    fs.writeFileSync(path.join(snap.path, "README.md"), "# poL\n");
    expect(code(() => verifyRelease(snap.path))).toBe("RELEASE_DIGEST_MISMATCH");
    fs.writeFileSync(path.join(snap.path, "README.md"), "# pol\n");
    expect(verifyRelease(snap.path).digest).toBe(snap.digest);
    fs.writeFileSync(path.join(snap.path, "extra.py"), "");
    expect(code(() => verifyRelease(snap.path))).toBe("RELEASE_DIGEST_MISMATCH");
    fs.rmSync(path.join(snap.path, "extra.py"));
    fs.rmSync(path.join(snap.path, "README.md"));
    expect(code(() => verifyRelease(snap.path))).toBe("RELEASE_DIGEST_MISMATCH");
    fs.writeFileSync(path.join(snap.path, "README.md"), "# pol\n");
    fs.symlinkSync("main.py", path.join(snap.path, "alias.py"));
    expect(code(() => verifyRelease(snap.path))).toBe("SOURCE_SYMLINK");
    fs.rmSync(path.join(snap.path, "alias.py"));
    const other = path.join(releases, "0".repeat(64));
    fs.renameSync(snap.path, other);
    expect(code(() => verifyRelease(other))).toBe("RELEASE_DIGEST_MISMATCH");
  });

  it("refuses a release that is a symlink to a good release", () => {
    const { draft, releases } = fresh();
    const snap = snapshotRelease(draft, releases);
    const alias = path.join(path.dirname(releases), snap.digest);
    fs.symlinkSync(snap.path, alias);
    expect(code(() => verifyRelease(alias))).toBe("SOURCE_SYMLINK");
  });
});
