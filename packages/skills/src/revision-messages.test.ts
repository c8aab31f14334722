import { describe, expect, it } from "vitest";
import { skillDigest } from "./digest";
import { skillSetRevision } from "./revision";
import { parseSkillsFile } from "./skills-file";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return `${code}: ${message}`;
  }
  return "accepted";
}

const digest = skillDigest(Buffer.from("# a\n"));

describe("skillSetRevision refusals name the entry", () => {
  it("an invalid id, an invalid digest, a repeated id", () => {
    expect(refusal(() => skillSetRevision([{ id: "A", digest }]))).toBe('SKILL_INVALID_ID: invalid skill id "A"');
    expect(refusal(() => skillSetRevision([{ id: "a", digest: "x" }]))).toBe('SKILL_INVALID_DIGEST: skill a has an invalid digest "x"');
    expect(refusal(() => skillSetRevision([{ id: "a", digest }, { id: "a", digest }]))).toBe("SKILL_DUPLICATE_ID: skill id a appears twice");
  });
});

describe("parseSkillsFile checks each skill in order: id, digest form, uniqueness, then its body", () => {
  const file = (skills: unknown[]) => JSON.stringify({ revision: "r", skills });
  it("an invalid id is reported before its body's digest", () => {
    expect(refusal(() => parseSkillsFile(file([{ id: "Bad", digest, body: "other" }])))).toBe('SKILL_INVALID_ID: invalid skill id "Bad"');
  });
  it("a repeated id is reported before the repeat's body digest", () => {
    expect(refusal(() => parseSkillsFile(file([{ id: "a", digest, body: "# a\n" }, { id: "a", digest, body: "other" }])))).toBe("SKILL_DUPLICATE_ID: skill id a appears twice");
  });
  it("a null entry is a shape error, not a crash", () => {
    expect(refusal(() => parseSkillsFile(file([null])))).toBe('SKILLS_FILE_INVALID: skills file is invalid: skills[0] is not an object with exactly "id", "digest" and "body"');
    expect(refusal(() => parseSkillsFile("null"))).toBe('SKILLS_FILE_INVALID: skills file is invalid: expected an object with exactly "revision" and "skills"');
  });
});
