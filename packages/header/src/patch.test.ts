import { describe, expect, it } from "vitest";
import { applyPatches, checkPatch, diffPatches } from "./patch.js";

describe("diffPatches", () => {
  it("gives one patch per changed run, numbered in the old text", () => {
    expect(diffPatches("1\n2\n3\n", "1\nX\n3\nY\n", "s")).toStrictEqual([
      { source: "s", start_line: 2, old_lines: ["2\n"], new_lines: ["X\n"] },
      { source: "s", start_line: 4, old_lines: [], new_lines: ["Y\n"] },
    ]);
  });

  it("treats \\r\\n and \\n as different lines", () => {
    expect(diffPatches("a\r\n", "a\n", "s")).toStrictEqual([{ source: "s", start_line: 1, old_lines: ["a\r\n"], new_lines: ["a\n"] }]);
  });

  it("gives up (null) when the texts differ in too many lines to be worth a diff", () => {
    const many = (tag: string) => Array.from({ length: 5000 }, (_, i) => `${tag}${i}\n`).join("");
    expect(diffPatches(many("a"), many("b"), "s")).toBeNull();
  });

  it("diffs up to 1,024 edited lines and gives up above", () => {
    const text = (changed: number) => Array.from({ length: 600 }, (_, i) => (i < changed ? `new ${i}\n` : `old ${i}\n`)).join("");
    const at512 = diffPatches(text(0), text(512), "s");
    expect(at512).toHaveLength(1);
    expect(at512![0]!.old_lines).toHaveLength(512);
    expect(diffPatches(text(0), text(513), "s")).toBeNull();
  });
});

describe("applyPatches", () => {
  it("applies patches exactly, counting lines in the original text", () => {
    const patches = [
      { source: "s", start_line: 1, old_lines: [], new_lines: ["0\n"] },
      { source: "s", start_line: 2, old_lines: ["2\n"], new_lines: [] },
    ];
    expect(applyPatches("1\n2\n3", patches)).toBe("0\n1\n3");
  });

  it("refuses a patch whose old line differs only in its ending", () => {
    expect(() => applyPatches("a\r\n", [{ source: "s", start_line: 1, old_lines: ["a\n"], new_lines: ["b\n"] }])).toThrow(
      expect.objectContaining({ code: "HEADER_PATCH_MISMATCH" }),
    );
  });

  it("does not modify the patches it is given", () => {
    const patches = [{ source: "s", start_line: 1, old_lines: ["a\n"], new_lines: ["b\n"] }];
    const copy = structuredClone(patches);
    applyPatches("a\n", patches);
    expect(patches).toStrictEqual(copy);
  });
});

describe("checkPatch", () => {
  it.each([
    ["not an object", "x"],
    ["an unknown field", { source: "s", start_line: 1, old_lines: [], new_lines: ["a"], fuzz: 2 }],
    ["an empty source", { source: "", start_line: 1, old_lines: [], new_lines: ["a"] }],
    ["a fractional line", { source: "s", start_line: 1.5, old_lines: [], new_lines: ["a"] }],
    ["an empty line", { source: "s", start_line: 1, old_lines: [], new_lines: [""] }],
    ["a non-string line", { source: "s", start_line: 1, old_lines: [], new_lines: [3] }],
  ])("refuses %s", (_, patch) => {
    expect(() => checkPatch(patch)).toThrow(expect.objectContaining({ code: "HEADER_PATCH_INVALID" }));
  });
});
