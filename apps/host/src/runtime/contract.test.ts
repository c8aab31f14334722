import { assembleIndex } from "@klbr/skills";
import { describe, expect, test } from "vitest";
import { skillsSourceText } from "./contract";

const ok = (name: string, root: "builtin" | "managed") => ({ name, root, path: `/${root}/${name}`, verdict: { ok: true as const, digest: "1".repeat(64) } });

describe("the skills instruction source", () => {
  test("an id in both roots is refused once in the header, naming the roots (issue 19 item 10)", () => {
    const index = assembleIndex([ok("goodone", "builtin"), ok("goodone", "managed"), ok("deploy", "managed")]);
    expect(skillsSourceText(index)).toBe("Skills available (load by id):\n- deploy\nSkills refused:\n- goodone: duplicate: builtin and managed\n");
  });
});
