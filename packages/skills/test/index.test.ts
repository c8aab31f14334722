import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { defaultSkillRoots, indexSkills } from "../src/index";
import { buildTree, tempDir, type TreeEntry } from "./tree";

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});
async function fresh(): Promise<string> {
  const dir = await tempDir();
  made.push(dir);
  return dir;
}

describe("indexSkills roots", () => {
  it("refuses a root that exists but is not a directory", async () => {
    const base = await fresh();
    await writeFile(join(base, "file"), "x");
    await expect(indexSkills({ builtinDir: join(base, "file"), managedDir: join(base, "m") })).rejects.toMatchObject({
      code: "SKILL_ROOT_INVALID",
      message: expect.stringContaining(join(base, "file")),
    });
  });

  it("follows a root that is itself a symlink (the operator chose it)", async () => {
    const base = await fresh();
    await buildTree(join(base, "real"), [{ path: "a/SKILL.md", text: "# a\n" }]);
    await symlink(join(base, "real"), join(base, "link"));
    const index = await indexSkills({ builtinDir: join(base, "link"), managedDir: join(base, "m") });
    expect(index.skills.map((s) => [s.id, s.path])).toEqual([["a", join(base, "link", "a")]]);
  });

  it("refuses two roots that are the same directory, even through a symlink", async () => {
    const base = await fresh();
    await buildTree(join(base, "skills"), [{ path: "a/SKILL.md", text: "# a\n" }]);
    await symlink(join(base, "skills"), join(base, "alias"));
    await expect(indexSkills({ builtinDir: join(base, "alias"), managedDir: join(base, "skills") })).rejects.toMatchObject({
      code: "SKILL_ROOT_INVALID",
    });
  });

  it("reports the roots a skill came from", async () => {
    const base = await fresh();
    await buildTree(join(base, "b"), [{ path: "x/SKILL.md", text: "# x\n" }]);
    await buildTree(join(base, "m"), [{ path: "y/SKILL.md", text: "# y\n" }]);
    const index = await indexSkills({ builtinDir: join(base, "b"), managedDir: join(base, "m") });
    expect(index.skills.map((s) => [s.id, s.root])).toEqual([["x", "builtin"], ["y", "managed"]]);
  });

  it("does not read a huge SKILL.md past the limit", async () => {
    const base = await fresh();
    await mkdir(join(base, "b", "huge"), { recursive: true });
    await writeFile(join(base, "b", "huge", "SKILL.md"), Buffer.alloc(8 * 1024 * 1024, 0x61));
    const index = await indexSkills({ builtinDir: join(base, "b"), managedDir: join(base, "m") });
    expect(index.refused).toMatchObject([{ name: "huge", reason: "oversize" }]);
  });
});

describe("indexSkills properties", () => {
  const specArb = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom("a", "b", "c", "d", "Bad", "e_1"),
      root: fc.constantFrom("builtin", "managed"),
      body: fc.constantFrom("ok", "wrong", "missing", "nonutf8"),
    }),
    { selector: (s) => `${s.root}/${s.name}` },
  );
  function entries(spec: { name: string; root: string; body: string }): TreeEntry[] {
    const path = `${spec.name}/SKILL.md`;
    if (spec.body === "missing") return [{ path: spec.name, dir: true }];
    if (spec.body === "wrong") return [{ path, text: "# other\n" }];
    if (spec.body === "nonutf8") return [{ path, hex: Buffer.from(`# ${spec.name}\n`).toString("hex") + "ff" }];
    return [{ path, text: `# ${spec.name}\n${spec.root}\n` }];
  }

  it("gives the same index whatever order the tree was created in", async () => {
    await fc.assert(
      fc.asyncProperty(specArb, fc.func(fc.integer()), async (specs, key) => {
        const results = [];
        for (const order of [specs, [...specs].sort((x, y) => key(`${x.root}${x.name}`) - key(`${y.root}${y.name}`))]) {
          const base = await fresh();
          const roots = { builtinDir: join(base, "builtin"), managedDir: join(base, "managed") };
          await mkdir(roots.builtinDir);
          await mkdir(roots.managedDir);
          for (const spec of order) {
            await buildTree(spec.root === "builtin" ? roots.builtinDir : roots.managedDir, entries(spec));
          }
          const index = await indexSkills(roots);
          results.push({
            revision: index.revision,
            skills: index.skills.map(({ id, digest, root }) => ({ id, digest, root })),
            refused: index.refused.map(({ name, root, reason }) => ({ name, root, reason })),
          });
          await rm(base, { recursive: true, force: true });
        }
        expect(results[1]).toEqual(results[0]);
        // An admitted id is never present in the other root.
        for (const skill of results[0]!.skills) {
          expect(specs.filter((s) => s.name === skill.id)).toHaveLength(1);
        }
      }),
      { numRuns: 30 },
    );
  });
});

describe("defaultSkillRoots", () => {
  it("uses KLBR_SKILLS_DIR when set", () => {
    expect(defaultSkillRoots({ workspace: "/w", data: "/d", env: { KLBR_SKILLS_DIR: "/s" } })).toEqual({
      builtinDir: "/s",
      managedDir: "/d/skills",
    });
  });

  it("defaults builtin to <workspace>/skills when unset or empty", () => {
    expect(defaultSkillRoots({ workspace: "/w", data: "/d", env: {} }).builtinDir).toBe("/w/skills");
    expect(defaultSkillRoots({ workspace: "/w", data: "/d", env: { KLBR_SKILLS_DIR: "" } }).builtinDir).toBe("/w/skills");
  });
});
