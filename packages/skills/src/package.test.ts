import { describe, expect, it } from "vitest";
import * as skills from "./index";

describe("@klbr/skills public surface", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(skills).sort()).toEqual(
      [
        "MAX_SKILL_BYTES",
        "REFUSAL_REASONS",
        "SKILLS_FILE_NAME",
        "SKILL_ERROR_CODES",
        "SKILL_FILE_NAME",
        "SKILL_ID_PATTERN",
        "SkillError",
        "assembleIndex",
        "checkSkillBody",
        "defaultSkillRoots",
        "encodeSkillsFile",
        "hasSkillTitle",
        "indexSkills",
        "isDigest",
        "isSkillError",
        "isSkillId",
        "loadSkill",
        "materializeSkills",
        "parseSkillsFile",
        "refusalLines",
        "skillDigest",
        "skillSetRevision",
        "skillTitleLine",
      ].sort(),
    );
  });

  it("pins the refusal reasons and their precedence", () => {
    expect(skills.REFUSAL_REASONS).toEqual([
      "symlink",
      "invalid_id",
      "missing_skill_md",
      "unreadable",
      "oversize",
      "non_utf8",
      "title_mismatch",
      "duplicate",
    ]);
  });

  it("brands errors so isSkillError does not depend on one class identity", () => {
    const error = new skills.SkillError("SKILL_NOT_FOUND", "x");
    expect(skills.isSkillError(error)).toBe(true);
    expect(skills.isSkillError(new Error("x"))).toBe(false);
    expect(skills.isSkillError({ code: "SKILL_NOT_FOUND" })).toBe(false);
    expect(error.code).toBe("SKILL_NOT_FOUND");
  });
});
