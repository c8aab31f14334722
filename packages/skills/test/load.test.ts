import { appendFile, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexSkills, isSkillError, loadSkill, skillDigest, type SkillIndex } from "../src/index";
import { buildTree, tempDir } from "./tree";

let base: string;
let roots: { builtinDir: string; managedDir: string };
let index: SkillIndex;

beforeEach(async () => {
  base = await tempDir();
  roots = { builtinDir: join(base, "builtin"), managedDir: join(base, "managed") };
  await buildTree(roots.builtinDir, [
    { path: "workspace/SKILL.md", text: "# workspace\nbody\n" },
    { path: "clash/SKILL.md", text: "# clash\n" },
  ]);
  await buildTree(roots.managedDir, [
    { path: "deploy/SKILL.md", text: "# deploy\n" },
    { path: "clash/SKILL.md", text: "# clash\n" },
    { path: "broken/SKILL.md", text: "# wrong\n" },
  ]);
  index = await indexSkills(roots);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function loadError(id: string) {
  const error = await loadSkill(index, id).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isSkillError(error)).toBe(true);
  return error as { code: string; message: string };
}

describe("loadSkill", () => {
  it("returns the body with its digest", async () => {
    const skill = await loadSkill(index, "workspace");
    expect(skill).toEqual({ id: "workspace", digest: skillDigest(Buffer.from("# workspace\nbody\n")), body: "# workspace\nbody\n" });
  });

  it("refuses a body whose bytes changed since indexing", async () => {
    await appendFile(join(roots.builtinDir, "workspace", "SKILL.md"), "more\n");
    const error = await loadError("workspace");
    expect(error.code).toBe("SKILL_CHANGED");
    expect(error.message).toContain("workspace");
  });

  it("loads again once the bytes are restored", async () => {
    const path = join(roots.builtinDir, "workspace", "SKILL.md");
    await writeFile(path, "# workspace\nedited\n");
    await expect(loadSkill(index, "workspace")).rejects.toMatchObject({ code: "SKILL_CHANGED" });
    await writeFile(path, "# workspace\nbody\n");
    await expect(loadSkill(index, "workspace")).resolves.toMatchObject({ id: "workspace" });
  });

  it("refuses a SKILL.md swapped for a symlink to identical bytes", async () => {
    const dir = join(roots.builtinDir, "workspace");
    await writeFile(join(base, "copy.md"), "# workspace\nbody\n");
    await rm(join(dir, "SKILL.md"));
    await symlink(join(base, "copy.md"), join(dir, "SKILL.md"));
    expect((await loadError("workspace")).code).toBe("SKILL_CHANGED");
  });

  it("refuses a skill directory swapped for a symlink", async () => {
    const dir = join(roots.builtinDir, "workspace");
    await rename(dir, join(base, "moved"));
    await symlink(join(base, "moved"), dir);
    expect((await loadError("workspace")).code).toBe("SKILL_CHANGED");
  });

  it("refuses a deleted skill as changed", async () => {
    await rm(join(roots.builtinDir, "workspace"), { recursive: true });
    expect((await loadError("workspace")).code).toBe("SKILL_CHANGED");
  });

  it("refuses a SKILL.md replaced by a directory", async () => {
    const path = join(roots.builtinDir, "workspace", "SKILL.md");
    await rm(path);
    await mkdir(path);
    expect((await loadError("workspace")).code).toBe("SKILL_CHANGED");
  });

  it("says an unknown id is not in the index", async () => {
    const error = await loadError("nothing");
    expect(error.code).toBe("SKILL_NOT_FOUND");
    expect(error.message).toContain('"nothing" is not in the index');
  });

  it("says which reasons a refused id was refused for, in which roots", async () => {
    const clash = await loadError("clash");
    expect(clash.code).toBe("SKILL_NOT_FOUND");
    expect(clash.message).toContain("duplicate in builtin");
    expect(clash.message).toContain("duplicate in managed");
    const broken = await loadError("broken");
    expect(broken.message).toContain("title_mismatch in managed");
  });

  it("does not load a skill added after indexing", async () => {
    await buildTree(roots.managedDir, [{ path: "fresh/SKILL.md", text: "# fresh\n" }]);
    expect((await loadError("fresh")).code).toBe("SKILL_NOT_FOUND");
    const next = await indexSkills(roots);
    await expect(loadSkill(next, "fresh")).resolves.toMatchObject({ body: "# fresh\n" });
  });
});
