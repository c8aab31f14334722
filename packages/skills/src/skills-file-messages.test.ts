import { describe, expect, it } from "vitest";
import { skillDigest } from "./digest";
import { skillSetRevision } from "./revision";
import { parseSkillsFile } from "./skills-file";

// Each refusal of a skills.json names what is wrong, not only its code (issue 25: every message pinned).
function refusal(input: string | Uint8Array): string {
  try {
    parseSkillsFile(input);
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return `${code}: ${message}`;
  }
  return "accepted";
}

const body = "# a\n";
const digest = skillDigest(Buffer.from(body, "utf8"));
const skill = (extra: Record<string, unknown> = {}) => ({ id: "a", digest, body, ...extra });
const file = (skills: unknown[], revision: unknown = skillSetRevision(skills as Array<{ id: string; digest: string }>)) =>
  JSON.stringify({ revision, skills });

describe("parseSkillsFile refusal messages", () => {
  it("names the shape that is wrong", () => {
    expect(refusal(Buffer.from("ff", "hex"))).toBe("SKILLS_FILE_INVALID: skills file is invalid: not UTF-8");
    expect(refusal("{")).toMatch(/^SKILLS_FILE_INVALID: skills file is invalid: not JSON \(.+\)$/);
    expect(refusal('{"revision":"r","revision":"r","skills":[]}')).toBe('SKILLS_FILE_INVALID: skills file is invalid: duplicate key "revision"');
    expect(refusal("[]")).toBe('SKILLS_FILE_INVALID: skills file is invalid: expected an object with exactly "revision" and "skills"');
    expect(refusal('{"revision":"r"}')).toBe('SKILLS_FILE_INVALID: skills file is invalid: expected an object with exactly "revision" and "skills"');
    expect(refusal('{"revision":"r","other":[]}')).toBe('SKILLS_FILE_INVALID: skills file is invalid: expected an object with exactly "revision" and "skills"');
    expect(refusal('{"revision":1,"skills":[]}')).toBe('SKILLS_FILE_INVALID: skills file is invalid: "revision" is not a string');
    expect(refusal('{"revision":"r","skills":{}}')).toBe('SKILLS_FILE_INVALID: skills file is invalid: "skills" is not an array');
  });

  it("names the skill entry and the field", () => {
    const prefix = "SKILLS_FILE_INVALID: skills file is invalid: ";
    expect(refusal(file([skill(), "x"], "r"))).toBe(`${prefix}skills[1] is not an object with exactly "id", "digest" and "body"`);
    expect(refusal(file([[]], "r"))).toBe(`${prefix}skills[0] is not an object with exactly "id", "digest" and "body"`);
    expect(refusal(file([{ id: "a", digest }], "r"))).toBe(`${prefix}skills[0] is not an object with exactly "id", "digest" and "body"`);
    expect(refusal(file([{ id: "a", digest, text: body }], "r"))).toBe(`${prefix}skills[0] is not an object with exactly "id", "digest" and "body"`);
    expect(refusal(file([skill({ id: 1 })], "r"))).toBe(`${prefix}skills[0].id is not a string`);
    expect(refusal(file([skill(), skill({ id: "b", digest: null })], "r"))).toBe(`${prefix}skills[1].digest is not a string`);
    expect(refusal(file([skill({ body: 7 })], "r"))).toBe(`${prefix}skills[0].body is not a string`);
    expect(refusal(file([skill({ body: "# a\n\uD800" })], "r"))).toBe(`${prefix}skills[0].body holds a lone surrogate`);
  });

  it("names the id, the digests and the revisions that disagree", () => {
    expect(refusal(file([skill({ id: "Bad" })], "r"))).toBe('SKILL_INVALID_ID: invalid skill id "Bad"');
    expect(refusal(file([skill({ digest: "ABC" })], "r"))).toBe('SKILL_INVALID_DIGEST: skill a has an invalid digest "ABC"');
    expect(refusal(file([skill(), skill()], "r"))).toBe("SKILL_DUPLICATE_ID: skill id a appears twice");
    const other = skillDigest(Buffer.from("# b\n"));
    expect(refusal(file([skill({ digest: other })], "r"))).toBe(`SKILL_DIGEST_MISMATCH: skill a body has digest ${digest}, file says ${other}`);
    const actual = skillSetRevision([{ id: "a", digest }]);
    expect(refusal(file([skill()], "0".repeat(64)))).toBe(`SKILL_REVISION_MISMATCH: skill set revision is ${actual}, file says "${"0".repeat(64)}"`);
    expect(refusal(file([skill()]))).toBe("accepted");
  });

  it("returns only the three C4 keys of each skill", () => {
    const parsed = parseSkillsFile(file([skill()]));
    expect(parsed).toEqual({ revision: skillSetRevision([{ id: "a", digest }]), skills: [{ id: "a", digest, body }] });
    expect(Object.keys(parsed.skills[0]!)).toEqual(["id", "digest", "body"]);
  });
});
