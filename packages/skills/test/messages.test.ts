import { mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexSkills, loadSkill, materializeSkills, skillDigest, skillSetRevision, type SkillIndex, type SkillRoots } from "../src/index";
import { buildTree, tempDir } from "./tree";

// What each SkillError says: the code and a message naming the offending root, path or digest.
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return `${code}: ${message}`;
  }
  return "resolved";
}

let base: string;
beforeEach(async () => {
  base = await tempDir();
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("root refusals", () => {
  it("names the root and the path that is not a directory", async () => {
    await writeFile(join(base, "file"), "x");
    expect(await refusal(indexSkills({ builtinDir: join(base, "none"), managedDir: join(base, "file") }))).toBe(
      `SKILL_ROOT_INVALID: managed skills root ${join(base, "file")} is not a directory`,
    );
  });

  it("names a root that cannot be read (a path through a file)", async () => {
    await writeFile(join(base, "file"), "x");
    const dir = join(base, "file", "below");
    expect(await refusal(indexSkills({ builtinDir: dir, managedDir: join(base, "none") }))).toBe(`SKILL_ROOT_INVALID: builtin skills root ${dir} cannot be read`);
  });

  it("names both roots when they are one directory", async () => {
    await mkdir(join(base, "s"));
    expect(await refusal(indexSkills({ builtinDir: join(base, "s"), managedDir: join(base, "s") }))).toBe(
      `SKILL_ROOT_INVALID: builtin root ${join(base, "s")} and managed root ${join(base, "s")} are the same directory`,
    );
  });

  it("two absent roots are two empty roots, not one directory", async () => {
    const index = await indexSkills({ builtinDir: join(base, "a"), managedDir: join(base, "b") });
    expect(index).toEqual({ revision: skillSetRevision([]), skills: [], refused: [] });
  });
});

describe("loadSkill: SKILL_CHANGED says what changed", () => {
  let roots: SkillRoots;
  let index: SkillIndex;
  beforeEach(async () => {
    roots = { builtinDir: join(base, "b"), managedDir: join(base, "m") };
    await buildTree(roots.builtinDir, [{ path: "alpha/SKILL.md", text: "# alpha\n" }]);
    index = await indexSkills(roots);
  });
  const dir = () => join(roots.builtinDir, "alpha");

  it("a directory that is gone", async () => {
    await rm(dir(), { recursive: true });
    expect(await refusal(loadSkill(index, "alpha"))).toBe(`SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: its directory is gone`);
  });

  it("a directory swapped for a symlink", async () => {
    await rename(dir(), join(base, "moved"));
    await symlink(join(base, "moved"), dir());
    expect(await refusal(loadSkill(index, "alpha"))).toBe(
      `SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: its directory is no longer a plain directory`,
    );
  });

  it("a SKILL.md that is now a symlink, or missing", async () => {
    await rm(join(dir(), "SKILL.md"));
    expect(await refusal(loadSkill(index, "alpha"))).toBe(`SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: SKILL.md is now missing`);
    await writeFile(join(base, "copy.md"), "# alpha\n");
    await symlink(join(base, "copy.md"), join(dir(), "SKILL.md"));
    expect(await refusal(loadSkill(index, "alpha"))).toBe(`SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: SKILL.md is now symlink`);
  });

  it("a SKILL.md grown past the limit is oversize, not read", async () => {
    await writeFile(join(dir(), "SKILL.md"), Buffer.alloc(65_537, 0x61));
    expect(await refusal(loadSkill(index, "alpha"))).toBe(`SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: SKILL.md is now oversize`);
  });

  it("other bytes: both digests named", async () => {
    await writeFile(join(dir(), "SKILL.md"), "# alpha\nmore\n");
    const now = skillDigest(Buffer.from("# alpha\nmore\n"));
    expect(await refusal(loadSkill(index, "alpha"))).toBe(
      `SKILL_CHANGED: skill alpha at ${dir()} changed since it was indexed: digest ${now}, indexed ${index.skills[0]!.digest}`,
    );
  });

  it("a refused id names each reason and root with its path", async () => {
    await buildTree(roots.managedDir, [{ path: "alpha/SKILL.md", text: "# alpha\n" }]);
    const both = await indexSkills(roots);
    expect(await refusal(loadSkill(both, "alpha"))).toBe(
      `SKILL_NOT_FOUND: skill "alpha" was refused: duplicate in builtin (${dir()}); duplicate in managed (${join(roots.managedDir, "alpha")})`,
    );
  });

  it("materialize names both revisions when the index is forged", async () => {
    const out = join(base, "out");
    await mkdir(out);
    const forged = { ...index, revision: "0".repeat(64) };
    expect(await refusal(materializeSkills(forged, out))).toBe(
      `SKILL_REVISION_MISMATCH: index revision ${"0".repeat(64)} does not match its skills (${index.revision})`,
    );
  });
});
