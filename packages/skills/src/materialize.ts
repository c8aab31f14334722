import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SKILLS_FILE_NAME } from "./constants";
import { SkillError } from "./errors";
import { loadSkill } from "./load";
import { skillSetRevision } from "./revision";
import { encodeSkillsFile } from "./skills-file";
import type { SkillIndex } from "./types";

/**
 * Write the index's admitted set as `<dir>/skills.json` (C4) with mode 0600, atomically (a
 * temporary file in `dir`, fsync, rename), and return its path. Each body is read again with
 * the digest check of loadSkill, so a skill edited since indexing fails with SKILL_CHANGED.
 */
export async function materializeSkills(index: SkillIndex, dir: string): Promise<string> {
  const skills = [];
  for (const { id } of index.skills) skills.push(await loadSkill(index, id));
  const revision = skillSetRevision(skills);
  if (revision !== index.revision) {
    throw new SkillError("SKILL_REVISION_MISMATCH", `index revision ${index.revision} does not match its skills (${revision})`);
  }
  const target = join(dir, SKILLS_FILE_NAME);
  const temporary = join(dir, `.${SKILLS_FILE_NAME}.${randomBytes(8).toString("hex")}.tmp`);
  const handle = await open(temporary, "wx", 0o600);
  try {
    try {
      await handle.chmod(0o600); // the umask can only narrow 0600, but say it explicitly
      // Stryker disable next-line StringLiteral: equivalent, an empty encoding name is read as utf8
      await handle.writeFile(encodeSkillsFile({ revision, skills }), "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  return target;
}
