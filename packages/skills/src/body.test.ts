import { describe, expect, it } from "vitest";
import { checkSkillBody, skillTitleLine } from "./body";
import { MAX_SKILL_BYTES } from "./constants";

const utf8 = (text: string) => Buffer.from(text, "utf8");

describe("skillTitleLine", () => {
  it.each([
    ["# a\nrest", "# a"],
    ["\n\n# a", "# a"],
    [" \t\r\n# a \t\r\n", "# a"],
    ["  # a", "  # a"],
    ["", undefined],
    ["\n \n\t", undefined],
  ])("%j -> %j", (text, expected) => {
    expect(skillTitleLine(text)).toBe(expected);
  });
});

describe("checkSkillBody", () => {
  it("admits a body whose first non-empty line is the title and keeps the text exactly", () => {
    expect(checkSkillBody("a", utf8("\r\n# a\r\nx"))).toEqual({ ok: true, body: "\r\n# a\r\nx" });
  });

  it("keeps a BOM in the text (so the body's UTF-8 is the file's bytes) and so refuses the title", () => {
    expect(checkSkillBody("a", Buffer.from("efbbbf23206100", "hex"))).toEqual({ ok: false, reason: "title_mismatch" });
  });

  it("refuses in precedence order: oversize, then non_utf8, then title_mismatch", () => {
    const big = Buffer.alloc(MAX_SKILL_BYTES + 1, 0xff);
    expect(checkSkillBody("a", big)).toEqual({ ok: false, reason: "oversize" });
    expect(checkSkillBody("a", big.subarray(1))).toEqual({ ok: false, reason: "non_utf8" });
    expect(checkSkillBody("a", utf8("# b\n"))).toEqual({ ok: false, reason: "title_mismatch" });
  });
});
