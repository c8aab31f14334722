import { describe, expect, it } from "vitest";
import { entryContent, entryName, loadVectors, type TreeEntry } from "../test/helpers/tree.js";
import { compareNames, digestEntries } from "./digest.js";
import { isActivationError } from "./errors.js";

describe("digestEntries vectors (fixtures/digest/entries.json)", () => {
  for (const c of loadVectors<{ entries: TreeEntry[] }, { digest: string }>("digest/entries.json")) {
    it(c.description, () => {
      const entries = c.input.entries.map((e) => ({ name: entryName(e), content: entryContent(e) }));
      if (c.error) {
        let caught: unknown;
        try {
          digestEntries(entries);
        } catch (error) {
          caught = error;
        }
        expect(isActivationError(caught) && caught.code).toBe(c.error.code);
      } else {
        expect(digestEntries(entries)).toBe(c.expected!.digest);
      }
    });
  }
});

describe("compareNames", () => {
  it("orders by UTF-8 bytes where Array.prototype.sort's UTF-16 order differs", () => {
    const names = ["\u{1F600}.py", "\uFF61.py"];
    expect([...names].sort()).toEqual(["\u{1F600}.py", "\uFF61.py"]); // UTF-16: D83D < FF61
    const byBytes = names.map((n) => Buffer.from(n)).sort(compareNames).map((b) => b.toString());
    expect(byBytes).toEqual(["\uFF61.py", "\u{1F600}.py"]); // UTF-8: EF.. < F0..
  });

  it("does not mutate its input when digesting", () => {
    const entries = [
      { name: Buffer.from("b"), content: Buffer.from("2") },
      { name: Buffer.from("a"), content: Buffer.from("1") },
    ];
    digestEntries(entries);
    expect(entries.map((e) => e.name.toString())).toEqual(["b", "a"]);
  });
});
