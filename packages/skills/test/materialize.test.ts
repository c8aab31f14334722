import { readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { indexSkills, materializeSkills, parseSkillsFile, SKILLS_FILE_NAME, type SkillIndex } from "../src/index";
import { buildTree, tempDir } from "./tree";

let base: string;
let out: string;
let roots: { builtinDir: string; managedDir: string };
let index: SkillIndex;

beforeEach(async () => {
  base = await tempDir();
  out = await tempDir("klbr-skills-out-");
  roots = { builtinDir: join(base, "builtin"), managedDir: join(base, "managed") };
  await buildTree(roots.builtinDir, [
    { path: "workspace/SKILL.md", text: "# workspace\r\nbody ✓\n" },
    { path: "zeta/SKILL.md", text: "# zeta\n\u0000 ✓ 𝄞\n" },
  ]);
  await buildTree(roots.managedDir, [
    { path: "deploy/SKILL.md", text: "# deploy\n" },
    { path: "Bad/SKILL.md", text: "# Bad\n" },
  ]);
  index = await indexSkills(roots);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
  await rm(out, { recursive: true, force: true });
});

describe("materializeSkills", () => {
  it("writes the admitted set as skills.json with the index revision", async () => {
    const path = await materializeSkills(index, out);
    expect(path).toBe(join(out, SKILLS_FILE_NAME));
    const set = parseSkillsFile(await readFile(path));
    expect(set.revision).toBe(index.revision);
    expect(set.skills.map((s) => s.id)).toEqual(["deploy", "workspace", "zeta"]);
    expect(set.skills.map((s) => s.digest)).toEqual(index.skills.map((s) => s.digest));
    expect(set.skills[1]!.body).toBe("# workspace\r\nbody ✓\n");
    expect(set.skills[2]!.body).toBe("# zeta\n\u0000 ✓ 𝄞\n");
  });

  it("writes mode 0600 and leaves no temporary file behind", async () => {
    const path = await materializeSkills(index, out);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(out)).toEqual([SKILLS_FILE_NAME]);
  });

  it("replaces an existing skills.json whole", async () => {
    await writeFile(join(out, SKILLS_FILE_NAME), "stale");
    const path = await materializeSkills(index, out);
    expect(parseSkillsFile(await readFile(path)).revision).toBe(index.revision);
  });

  it("refuses with SKILL_CHANGED when a body changed since indexing, and writes nothing", async () => {
    await writeFile(join(roots.managedDir, "deploy", "SKILL.md"), "# deploy\nchanged\n");
    await expect(materializeSkills(index, out)).rejects.toMatchObject({ code: "SKILL_CHANGED" });
    expect(await readdir(out)).toEqual([]);
  });

  it("refuses an index whose revision does not match its skills", async () => {
    const forged = { ...index, revision: "0".repeat(64) };
    await expect(materializeSkills(forged, out)).rejects.toMatchObject({ code: "SKILL_REVISION_MISMATCH" });
  });

  it("materializes an empty set", async () => {
    const empty = await indexSkills({ builtinDir: join(base, "none"), managedDir: join(base, "none2") });
    const set = parseSkillsFile(await readFile(await materializeSkills(empty, out)));
    expect(set).toEqual({ revision: empty.revision, skills: [] });
  });
});
