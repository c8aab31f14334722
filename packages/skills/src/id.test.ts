import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors } from "../test/tree";
import { isSkillId } from "./id";

describe("fixtures/skills/ids.json", () => {
  for (const vector of loadVectors<{ description: string; input: unknown; expected: boolean }>("ids.json")) {
    it(vector.description, () => {
      expect(isSkillId(vector.input)).toBe(vector.expected);
    });
  }
});

describe("isSkillId", () => {
  it("accepts exactly the strings of the rule", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 70 }), (value) => {
        const expected =
          value.length >= 1 &&
          value.length <= 64 &&
          /[a-z]/.test(value[0] ?? "") &&
          [...value].every((c) => /^[a-z0-9_]$/.test(c));
        expect(isSkillId(value)).toBe(expected);
      }),
    );
  });
});
