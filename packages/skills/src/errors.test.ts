import { describe, expect, it } from "vitest";
import { isSkillError, SKILL_ERROR_CODES, SkillError } from "./errors";

describe("SkillError", () => {
  it("carries its name, code, message and cause", () => {
    const cause = new Error("EACCES");
    const error = new SkillError("SKILL_ROOT_INVALID", "root /r cannot be read", { cause });
    expect([error.name, error.code, error.message, error.cause]).toEqual(["SkillError", "SKILL_ROOT_INVALID", "root /r cannot be read", cause]);
    expect(error).toBeInstanceOf(Error);
    expect(new SkillError("SKILL_NOT_FOUND", "m").cause).toBeUndefined();
  });

  it("is recognised by its brand, not its shape", () => {
    expect(isSkillError(new SkillError("SKILL_CHANGED", "m"))).toBe(true);
    expect(isSkillError({ [Symbol.for("@klbr/skills/SkillError")]: true })).toBe(true);
    expect(isSkillError({ [Symbol.for("@klbr/skills/SkillError")]: 1 })).toBe(false);
    expect(isSkillError(null)).toBe(false);
    expect(isSkillError("SkillError")).toBe(false);
    expect(Object.keys(new SkillError("SKILL_CHANGED", "m"))).not.toContain(Symbol.for("@klbr/skills/SkillError"));
  });

  it("pins the codes Python raises too", () => {
    expect(SKILL_ERROR_CODES).toEqual([
      "SKILL_INVALID_ID",
      "SKILL_INVALID_DIGEST",
      "SKILL_DUPLICATE_ID",
      "SKILL_NOT_FOUND",
      "SKILL_CHANGED",
      "SKILL_ROOT_INVALID",
      "SKILLS_FILE_INVALID",
      "SKILL_DIGEST_MISMATCH",
      "SKILL_REVISION_MISMATCH",
    ]);
  });
});
