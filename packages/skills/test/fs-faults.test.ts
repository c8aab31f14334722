// The file-system failures a healthy disk never produces on its own, injected at the node:fs/promises
// boundary of this package (the real calls run for every other path): a root that stats as a
// directory but cannot be listed, an entry removed between the listing and its lstat, an entry
// whose lstat fails otherwise, and a SKILL.md that opens but cannot be read. Plus one real case: a
// SKILL.md that is a Unix socket cannot be opened at all (ENXIO).
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { rm } from "node:fs/promises";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { indexSkills, isSkillError } from "../src/index";
import { readSkillFile } from "../src/read";
import { buildTree, tempDir } from "./tree";

const faults = vi.hoisted(() => ({
  readdir: new Map<string, Error>(),
  lstat: new Map<string, Error>(),
  read: new Map<string, Error>(),
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...real,
    readdir: ((path: Parameters<typeof real.readdir>[0], options?: unknown) => {
      const fault = faults.readdir.get(String(path));
      return fault ? Promise.reject(fault) : real.readdir(path, options as never);
    }) as typeof real.readdir,
    lstat: ((path: Parameters<typeof real.lstat>[0], options?: unknown) => {
      const fault = faults.lstat.get(String(path));
      return fault ? Promise.reject(fault) : real.lstat(path, options as never);
    }) as typeof real.lstat,
    open: (async (path: Parameters<typeof real.open>[0], flags?: unknown, mode?: unknown) => {
      const handle = await real.open(path, flags as never, mode as never);
      const fault = faults.read.get(String(path));
      if (fault) handle.read = (() => Promise.reject(fault)) as typeof handle.read;
      return handle;
    }) as typeof real.open,
  };
});

function errno(code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

const made: string[] = [];
afterEach(() => {
  faults.readdir.clear();
  faults.lstat.clear();
  faults.read.clear();
});
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function roots(): Promise<{ base: string; builtinDir: string; managedDir: string }> {
  const base = await tempDir();
  made.push(base);
  const builtinDir = join(base, "b");
  const managedDir = join(base, "m");
  await buildTree(builtinDir, [
    { path: "alpha/SKILL.md", text: "# alpha\n" },
    { path: "beta/SKILL.md", text: "# beta\n" },
  ]);
  await buildTree(managedDir, [{ path: "gamma/SKILL.md", text: "# gamma\n" }]);
  return { base, builtinDir, managedDir };
}

describe("a root that cannot be stat'ed (a path through a file: ENOTDIR)", () => {
  it("is SKILL_ROOT_INVALID naming the root, with the system error as its cause", async () => {
    const { builtinDir } = await roots();
    const managedDir = join(builtinDir, "alpha", "SKILL.md", "skills");
    const error = await indexSkills({ builtinDir, managedDir }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "SKILL_ROOT_INVALID", message: `managed skills root ${managedDir} cannot be read` });
    expect((error as Error).cause).toMatchObject({ code: "ENOTDIR" });
  });
});

describe("a root that cannot be listed", () => {
  it("is SKILL_ROOT_INVALID naming the root, with the system error as its cause", async () => {
    const { builtinDir, managedDir } = await roots();
    const cause = errno("EIO", "EIO: i/o error, scandir");
    faults.readdir.set(managedDir, cause);
    const error = await indexSkills({ builtinDir, managedDir }).catch((e: unknown) => e);
    expect(isSkillError(error)).toBe(true);
    expect(error).toMatchObject({ code: "SKILL_ROOT_INVALID", message: `managed skills root ${managedDir} cannot be listed` });
    expect((error as Error).cause).toBe(cause);
  });
});

describe("an entry's lstat", () => {
  it("failing with ENOENT (removed while the root was listed) leaves the entry out, the rest stands", async () => {
    const { builtinDir, managedDir } = await roots();
    faults.lstat.set(join(builtinDir, "beta"), errno("ENOENT", "ENOENT: no such file or directory, lstat"));
    const index = await indexSkills({ builtinDir, managedDir });
    expect(index.skills.map((s) => s.id)).toEqual(["alpha", "gamma"]);
    expect(index.refused).toEqual([]);
  });

  it("failing otherwise fails the index with that error (nothing is silently dropped)", async () => {
    const { builtinDir, managedDir } = await roots();
    const cause = errno("EIO", "EIO: i/o error, lstat");
    faults.lstat.set(join(builtinDir, "beta"), cause);
    await expect(indexSkills({ builtinDir, managedDir })).rejects.toBe(cause);
  });
});

describe("a SKILL.md that opens but cannot be read", () => {
  it("is `unreadable` with the system's code, and refused as unreadable in the index", async () => {
    const { builtinDir, managedDir } = await roots();
    const file = join(builtinDir, "beta", "SKILL.md");
    faults.read.set(file, errno("EIO", "EIO: i/o error, read"));
    expect(await readSkillFile(join(builtinDir, "beta"))).toEqual({ kind: "unreadable", code: "EIO" });
    const index = await indexSkills({ builtinDir, managedDir });
    expect(index.skills.map((s) => s.id)).toEqual(["alpha", "gamma"]);
    expect(index.refused).toEqual([{ name: "beta", root: "builtin", reason: "unreadable", path: join(builtinDir, "beta") }]);
  });

  it("an error without a system code reads `unknown`", async () => {
    const { builtinDir } = await roots();
    faults.read.set(join(builtinDir, "alpha", "SKILL.md"), errno(undefined, "not a system error"));
    expect(await readSkillFile(join(builtinDir, "alpha"))).toEqual({ kind: "unreadable", code: "unknown" });
  });
});

describe("a SKILL.md that is a Unix socket (a real ENXIO at open)", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

  it("is `unreadable` with ENXIO, and refused as unreadable in the index", async () => {
    const { builtinDir, managedDir } = await roots();
    await rm(join(builtinDir, "beta", "SKILL.md"));
    const socket = join(builtinDir, "beta", "SKILL.md");
    server = createServer();
    await new Promise<void>((listening, failed) => server!.once("error", failed).listen(socket, listening));
    expect(await readSkillFile(join(builtinDir, "beta"))).toEqual({ kind: "unreadable", code: "ENXIO" });
    const index = await indexSkills({ builtinDir, managedDir });
    expect(index.skills.map((s) => s.id)).toEqual(["alpha", "gamma"]);
    expect(index.refused).toEqual([{ name: "beta", root: "builtin", reason: "unreadable", path: join(builtinDir, "beta") }]);
  });
});
