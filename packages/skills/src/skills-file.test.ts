import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors } from "../test/tree";
import { skillDigest } from "./digest";
import { SKILL_ERROR_CODES } from "./errors";
import { skillSetRevision } from "./revision";
import { encodeSkillsFile, parseSkillsFile } from "./skills-file";

type FileCase =
  | { description: string; input: { text?: string; hex?: string }; expected: { revision: string; skills: { id: string; digest: string }[] } }
  | { description: string; input: { text?: string; hex?: string }; error: { code: string } };

function bytesOf(input: { text?: string; hex?: string }): Uint8Array {
  return input.text !== undefined ? Buffer.from(input.text, "utf8") : Buffer.from(input.hex ?? "", "hex");
}

describe("fixtures/skills/skills-file.json", () => {
  for (const vector of loadVectors<FileCase>("skills-file.json")) {
    it(vector.description, () => {
      if ("error" in vector) {
        expect(SKILL_ERROR_CODES).toContain(vector.error.code);
        expect(() => parseSkillsFile(bytesOf(vector.input))).toThrow(expect.objectContaining({ code: vector.error.code }));
      } else {
        const parsed = parseSkillsFile(bytesOf(vector.input));
        expect(parsed.revision).toBe(vector.expected.revision);
        expect(parsed.skills.map(({ id, digest }) => ({ id, digest }))).toEqual(vector.expected.skills);
        for (const skill of parsed.skills) expect(skillDigest(Buffer.from(skill.body, "utf8"))).toBe(skill.digest);
      }
    });
  }
});

describe("encodeSkillsFile", () => {
  it("round-trips any valid set through parseSkillsFile", () => {
    const idArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ id: idArb, body: fc.string({ unit: "grapheme", maxLength: 80 }) }), {
          selector: (s) => s.id,
          maxLength: 6,
        }),
        (items) => {
          const skills = items.map(({ id, body }) => ({ id, digest: skillDigest(Buffer.from(body, "utf8")), body }));
          const set = { revision: skillSetRevision(skills), skills };
          expect(parseSkillsFile(encodeSkillsFile(set))).toEqual(set);
        },
      ),
    );
  });

  it("writes exactly the C4 keys, in order", () => {
    const body = "# a\n";
    const skills = [{ id: "a", digest: skillDigest(Buffer.from(body)), body }];
    const text = encodeSkillsFile({ revision: skillSetRevision(skills), skills });
    expect(Object.keys(JSON.parse(text) as object)).toEqual(["revision", "skills"]);
    expect(text).toContain('{"id":"a","digest":');
  });
});
