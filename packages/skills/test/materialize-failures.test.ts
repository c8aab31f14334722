import { mkdir, readdir, rm } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexSkills, loadSkill, materializeSkills, SKILLS_FILE_NAME, type SkillIndex } from "../src/index";
import { buildTree, tempDir } from "./tree";

// What a failed write leaves (nothing) and what a finished one holds open (nothing).
let base: string;
let index: SkillIndex;
beforeEach(async () => {
  base = await tempDir();
  const roots = { builtinDir: join(base, "b"), managedDir: join(base, "m") };
  await buildTree(roots.builtinDir, [{ path: "alpha/SKILL.md", text: "# alpha\n" }]);
  index = await indexSkills(roots);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const openFds = () => readdirSync("/proc/self/fd").length;

describe("materializeSkills when the rename fails", () => {
  it("throws, and removes its temporary file", async () => {
    const out = join(base, "out");
    // A non-empty directory where skills.json goes: the rename onto it fails.
    await mkdir(join(out, SKILLS_FILE_NAME, "x"), { recursive: true });
    await expect(materializeSkills(index, out)).rejects.toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) });
    expect(await readdir(out)).toEqual([SKILLS_FILE_NAME]);
  });

  it("a directory that does not exist is the system's error, and nothing is written", async () => {
    await expect(materializeSkills(index, join(base, "absent"))).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("file descriptors", () => {
  it("materializeSkills and loadSkill close every file they open", async () => {
    const out = join(base, "out");
    await mkdir(out);
    await materializeSkills(index, out); // warm up whatever the first call opens for good
    const before = openFds();
    for (let i = 0; i < 20; i++) {
      await materializeSkills(index, out);
      await loadSkill(index, "alpha");
    }
    expect(openFds()).toBe(before);
  });
});
