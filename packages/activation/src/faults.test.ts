// What a healthy disk never does on its own while a tree is read or a release written, injected at
// the node:fs boundary of this package (every other call is the real one): a directory that
// vanishes between the walk's steps, a file system that reports no entry types, a file replaced by
// a symlink or removed after the walk, a file that grows while it is read, a copy that comes out
// different, and another snapshot that wins the final rename.
import { execFileSync } from "node:child_process";
import * as realFs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { refusal, scratchDirs, writeSource } from "../test/helpers/tree.js";
import { isActivationError } from "./errors.js";
import { MAX_SOURCE_BYTES } from "./limits.js";
import { snapshotRelease } from "./release.js";
import { scanSource, sourceDigest } from "./scan.js";

type Fs = typeof import("node:fs");

/** Per-path faults, keyed by absolute path; cleared after every test. */
const faults = vi.hoisted(() => ({
  readdir: new Map<string, Error>(),
  open: new Map<string, Error>(),
  /** Open this other path instead (the entry became something else after the walk). */
  openInstead: new Map<string, string>(),
  /** fstat of a file opened at this path reports this size. */
  size: new Map<string, number>(),
  /** writeFileSync of the copy of a file with this base name writes these bytes instead. */
  copyContent: new Map<string, Buffer>(),
  /** renameSync to this target runs this first. */
  beforeRename: new Map<string, () => void>(),
  rename: new Map<string, Error>(),
  /** Every entry reported with no type (DT_UNKNOWN), as some file systems do. */
  untyped: { on: false },
  opened: new Map<number, string>(),
  /** Every path lstat was called on. */
  lstats: [] as string[],
  /** What was fsynced, by the path it was opened at. */
  fsynced: [] as string[],
}));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<Fs>();
  const untyped = (d: realFs.Dirent): realFs.Dirent =>
    Object.assign(Object.create(Object.getPrototypeOf(d)), d, {
      isFile: () => false,
      isDirectory: () => false,
      isSymbolicLink: () => false,
      isFIFO: () => false,
      isSocket: () => false,
      isBlockDevice: () => false,
      isCharacterDevice: () => false,
    });
  const mocked = {
    ...real,
    lstatSync: ((file: string, options?: unknown) => {
      faults.lstats.push(String(file));
      return real.lstatSync(file, options as never);
    }) as Fs["lstatSync"],
    readdirSync: ((dir: string, options?: unknown) => {
      const fault = faults.readdir.get(String(dir));
      if (fault) throw fault;
      const got = real.readdirSync(dir, options as never) as unknown[];
      const typed = (options as { withFileTypes?: boolean } | undefined)?.withFileTypes;
      return faults.untyped.on && typed ? (got as realFs.Dirent[]).map(untyped) : got;
    }) as Fs["readdirSync"],
    openSync: ((file: string, flags?: unknown, mode?: unknown) => {
      const key = String(file);
      const fault = faults.open.get(key);
      if (fault) throw fault;
      const fd = real.openSync(faults.openInstead.get(key) ?? key, flags as never, mode as never);
      faults.opened.set(fd, key);
      return fd;
    }) as Fs["openSync"],
    fstatSync: ((fd: number, options?: unknown) => {
      const stat = real.fstatSync(fd, options as never) as realFs.Stats;
      const size = faults.size.get(faults.opened.get(fd) ?? "");
      return size === undefined ? stat : Object.assign(Object.create(Object.getPrototypeOf(stat)), stat, { size });
    }) as Fs["fstatSync"],
    writeFileSync: ((file: unknown, data: unknown, options?: unknown) => {
      const name = typeof file === "number" ? faults.opened.get(file) : String(file);
      const instead = name === undefined ? undefined : faults.copyContent.get(path.basename(name));
      return real.writeFileSync(file as never, (instead ?? data) as never, options as never);
    }) as Fs["writeFileSync"],
    fsyncSync: ((fd: number) => {
      faults.fsynced.push(faults.opened.get(fd) ?? `fd ${fd}`);
      return real.fsyncSync(fd);
    }) as Fs["fsyncSync"],
    renameSync: ((from: string, to: string) => {
      const before = faults.beforeRename.get(String(to));
      if (before) {
        faults.beforeRename.delete(String(to));
        before();
      }
      const fault = faults.rename.get(String(to));
      if (fault) throw fault;
      return real.renameSync(from, to);
    }) as Fs["renameSync"],
  };
  return { ...mocked, default: mocked };
});

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected`), { code });
}

// Registered first, so it runs after the afterEach below has cleared the faults.
const base = scratchDirs();
afterEach(() => {
  for (const map of [faults.readdir, faults.open, faults.openInstead, faults.size, faults.copyContent, faults.beforeRename, faults.rename]) map.clear();
  faults.untyped.on = false;
  faults.fsynced.length = 0;
  faults.lstats.length = 0;
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

/** A source root with `a.py`, `sub/b.md` and `sub/deep/c.json`. */
function tree(): string {
  const root = path.join(base(), "src");
  realFs.mkdirSync(path.join(root, "sub", "deep"), { recursive: true });
  realFs.writeFileSync(path.join(root, "a.py"), "A = 1\n");
  realFs.writeFileSync(path.join(root, "sub", "b.md"), "# b\n");
  realFs.writeFileSync(path.join(root, "sub", "deep", "c.json"), "{}\n");
  return root;
}

describe("the root", () => {
  it("under a regular file (ENOTDIR) is not found, named in the message", () => {
    const file = path.join(base(), "file");
    realFs.writeFileSync(file, "x");
    const root = path.join(file, "src");
    const got = refusal(() => scanSource(root));
    expect(got).toMatchObject({ code: "SOURCE_NOT_FOUND", path: ".", message: `source root ${JSON.stringify(root)} does not exist` });
    expect((got.cause as NodeJS.ErrnoException).code).toBe("ENOTDIR");
  });

  it("that cannot be looked at for another reason throws that error itself", () => {
    const root = path.join(base(), "n".repeat(300));
    const error = thrown(() => scanSource(root)) as NodeJS.ErrnoException;
    expect(isActivationError(error)).toBe(false);
    expect(error.code).toBe("ENAMETOOLONG");
  });
});

describe("a directory that vanishes while the walk reads it", () => {
  for (const code of ["ENOENT", "ENOTDIR"]) {
    it(`(${code}) is not found, by its relative name`, () => {
      const root = tree();
      faults.readdir.set(path.join(root, "sub", "deep"), errno(code));
      const got = refusal(() => scanSource(root));
      expect(got).toMatchObject({ code: "SOURCE_NOT_FOUND", path: "sub/deep", message: 'source directory "sub/deep" vanished while it was read' });
      expect((got.cause as NodeJS.ErrnoException).code).toBe(code);
    });
  }

  it("the root itself is named as .", () => {
    const root = tree();
    faults.readdir.set(root, errno("ENOENT"));
    expect(refusal(() => scanSource(root))).toMatchObject({ code: "SOURCE_NOT_FOUND", path: ".", message: 'source directory "." vanished while it was read' });
  });

  it("any other failure to list it is thrown as it is", () => {
    const root = tree();
    const fault = errno("EACCES");
    faults.readdir.set(path.join(root, "sub"), fault);
    expect(thrown(() => scanSource(root))).toBe(fault);
  });
});

describe("a file system that reports no entry types", () => {
  it("gives the same files and digest (each entry is looked at with lstat)", () => {
    const root = tree();
    const typed = sourceDigest(root);
    faults.untyped.on = true;
    expect(sourceDigest(root)).toEqual(typed);
  });

  it("still finds a symlink, a directory cache and an empty directory", () => {
    const root = tree();
    realFs.symlinkSync("a.py", path.join(root, "sub", "link.py"));
    faults.untyped.on = true;
    expect(refusal(() => scanSource(root))).toMatchObject({ code: "SOURCE_SYMLINK", path: "sub/link.py" });
    realFs.unlinkSync(path.join(root, "sub", "link.py"));
    realFs.mkdirSync(path.join(root, "sub", "__pycache__"));
    realFs.writeFileSync(path.join(root, "sub", "__pycache__", "x.pyc"), "");
    expect(refusal(() => scanSource(root))).toMatchObject({ code: "SOURCE_CACHE", path: "sub/__pycache__" });
  });
});

describe("a file system that reports entry types", () => {
  it("is walked without one more lstat per entry: only the root is looked at", () => {
    const root = tree();
    realFs.symlinkSync("a.py", path.join(root, "sub", "link.py"));
    realFs.mkdirSync(path.join(root, "sub", "__pycache__"));
    realFs.writeFileSync(path.join(root, "sub", "__pycache__", "x.pyc"), "");
    execFileSync("mkfifo", [path.join(root, "pipe.py")]);
    faults.lstats.length = 0;
    expect(refusal(() => scanSource(root)).code).toBe("SOURCE_SYMLINK");
    expect(faults.lstats).toEqual([root]);
  });
});

describe("a file that changes between the walk and its read", () => {
  it("became a symlink (ELOOP from O_NOFOLLOW): refused as a symlink, by name", () => {
    const root = tree();
    faults.open.set(path.join(root, "sub", "b.md"), errno("ELOOP"));
    const got = refusal(() => scanSource(root));
    expect(got).toMatchObject({ code: "SOURCE_SYMLINK", path: "sub/b.md", message: 'source entry "sub/b.md" is a symbolic link; sources may hold no symlinks' });
    expect((got.cause as NodeJS.ErrnoException).code).toBe("ELOOP");
  });

  it("was removed: not found, by name", () => {
    const root = tree();
    faults.open.set(path.join(root, "a.py"), errno("ENOENT"));
    const got = refusal(() => scanSource(root));
    expect(got).toMatchObject({ code: "SOURCE_NOT_FOUND", path: "a.py", message: 'source file "a.py" vanished while it was read' });
    expect((got.cause as NodeJS.ErrnoException).code).toBe("ENOENT");
  });

  it("cannot be opened for another reason: that error is thrown as it is", () => {
    const root = tree();
    const fault = errno("EACCES");
    faults.open.set(path.join(root, "a.py"), fault);
    expect(thrown(() => scanSource(root))).toBe(fault);
  });

  it("became a directory: refused as not regular, by name", () => {
    const root = tree();
    faults.openInstead.set(path.join(root, "a.py"), path.join(root, "sub"));
    expect(refusal(() => scanSource(root))).toMatchObject({
      code: "SOURCE_NOT_REGULAR",
      path: "a.py",
      message: 'source entry "a.py" is not a regular file or directory',
    });
  });

  it("grew after its size was taken: every byte is read", () => {
    const root = tree();
    const content = Buffer.alloc(70_000, 0x61);
    realFs.writeFileSync(path.join(root, "a.py"), content);
    faults.size.set(path.join(root, "a.py"), 10);
    const got = scanSource(root).find((f) => f.name === "a.py")!;
    expect(got.content.equals(content)).toBe(true);
  });

  it("grew from just under the 2 MiB budget to past it: too large", () => {
    const root = tree();
    const file = path.join(root, "sub", "deep", "c.json");
    realFs.rmSync(path.join(root, "a.py"));
    realFs.rmSync(path.join(root, "sub", "b.md"));
    realFs.writeFileSync(file, Buffer.alloc(MAX_SOURCE_BYTES + 1, 0x20));
    faults.size.set(file, MAX_SOURCE_BYTES - 1);
    expect(refusal(() => scanSource(root)).code).toBe("SOURCE_TOO_LARGE");
  });

  it("grew to exactly the budget: admitted whole", () => {
    const root = tree();
    const file = path.join(root, "sub", "deep", "c.json");
    realFs.rmSync(path.join(root, "a.py"));
    realFs.rmSync(path.join(root, "sub", "b.md"));
    realFs.writeFileSync(file, Buffer.alloc(MAX_SOURCE_BYTES, 0x20));
    faults.size.set(file, MAX_SOURCE_BYTES - 2);
    expect(scanSource(root)[0]!.content.length).toBe(MAX_SOURCE_BYTES);
  });
});

describe("snapshotRelease when the disk misbehaves", () => {
  function draft(): { dir: string; releases: string } {
    const dir = path.join(base(), "draft");
    realFs.mkdirSync(dir);
    writeSource(dir, { "notes.md": "notes\n" });
    return { dir, releases: path.join(path.dirname(dir), "releases") };
  }
  const leftovers = (releases: string) => realFs.readdirSync(releases).filter((n) => n.startsWith(".tmp-"));

  it("a copy that does not digest like the draft is refused, and its temporary directory removed", () => {
    const { dir, releases } = draft();
    const digest = sourceDigest(dir).digest;
    faults.copyContent.set("notes.md", Buffer.from("other\n"));
    const got = refusal(() => snapshotRelease(dir, releases));
    expect(got.code).toBe("RELEASE_DIGEST_MISMATCH");
    expect(got.message).toContain(`the copy of ${JSON.stringify(dir)} has digest `);
    expect(got.message).toContain(`, the draft ${digest}`);
    expect(got.path).toMatch(/\.tmp-/);
    expect(leftovers(releases)).toEqual([]);
    expect(realFs.existsSync(path.join(releases, digest))).toBe(false);
  });

  for (const code of ["ENOTEMPTY", "EEXIST"]) {
    it(`another snapshot that wins the rename (${code}) is verified and reused; no temporary directory is left`, () => {
      const { dir, releases } = draft();
      const digest = sourceDigest(dir).digest;
      const target = path.join(releases, digest);
      faults.beforeRename.set(target, () => {
        const theirs = snapshotRelease(dir, releases);
        expect(theirs.reused).toBe(false);
        // Linux says ENOTEMPTY over a full directory; some systems say EEXIST.
        if (code === "EEXIST") faults.rename.set(target, errno("EEXIST"));
      });
      const snap = snapshotRelease(dir, releases);
      expect(snap).toMatchObject({ reused: true, path: target, digest });
      expect(leftovers(releases)).toEqual([]);
    });
  }

  it("puts every file, then every directory deepest first, then the releases folder on disk", () => {
    const dir = path.join(base(), "draft");
    realFs.mkdirSync(dir);
    writeSource(dir, { "sub/b.md": "b\n", "sub/deep/c.md": "c\n" });
    const releases = path.join(path.dirname(dir), "releases");
    const snap = snapshotRelease(dir, releases);
    const temp = path.dirname(faults.fsynced.find((p) => p.endsWith("manifest.json"))!);
    expect(path.basename(temp)).toMatch(/^\.tmp-/);
    const shown = faults.fsynced.map((p) => (p.startsWith(`${temp}/`) ? path.relative(temp, p) : p === temp ? "." : p));
    expect(shown.slice(0, 4).sort()).toEqual(["main.py", "manifest.json", "sub/b.md", "sub/deep/c.md"]);
    expect(shown.slice(4)).toEqual(["sub/deep", "sub", ".", releases]);
    expect(snap.reused).toBe(false);
    // The same bytes again: the release is verified and reused, nothing is written.
    faults.fsynced.length = 0;
    expect(snapshotRelease(dir, releases)).toMatchObject({ reused: true, path: snap.path });
    expect(faults.fsynced).toEqual([]);
    expect(realFs.readdirSync(releases)).toEqual([snap.digest]);
  });

  it("a rename that fails otherwise is thrown, and the temporary directory removed", () => {
    const { dir, releases } = draft();
    const target = path.join(releases, sourceDigest(dir).digest);
    const fault = errno("EXDEV");
    faults.rename.set(target, fault);
    expect(thrown(() => snapshotRelease(dir, releases))).toBe(fault);
    expect(leftovers(releases)).toEqual([]);
    expect(realFs.existsSync(target)).toBe(false);
  });
});
