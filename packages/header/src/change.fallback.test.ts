// If the line diff itself ever disagrees with the texts, revise must still never carry a patch
// that does not reconstruct: jsdiff is replaced here by one that lies about which lines changed.
import type { Change } from "diff";
import { describe, expect, it, vi } from "vitest";

const lie = vi.hoisted(() => ({ mode: "shift" as "shift" | "abort" }));

vi.mock("diff", async (importOriginal) => {
  const real = await importOriginal<typeof import("diff")>();
  return {
    ...real,
    diffLines: (a: string, b: string) => {
      if (lie.mode === "abort") return undefined;
      const changes: Change[] = real.diffLines(a, b);
      // Claim the first changed run starts one line later than it does.
      const first = changes.findIndex((c) => c.added || c.removed);
      if (first > 0 && changes[first - 1]!.count > 0) {
        return [
          { ...changes[first - 1]!, count: changes[first - 1]!.count + 1 },
          ...changes.slice(first),
        ];
      }
      return changes;
    },
  };
});

const { revise } = await import("./change.js");

describe("revise when the line diff is wrong", () => {
  it("carries the whole text instead of an unverified patch", () => {
    lie.mode = "shift";
    const change = revise("a\nb\nc\n", [{ name: "contract", text: "a\nB\nc\n" }]);
    expect(change).toStrictEqual({ form: "full", text: "a\nB\nc\n" });
  });

  it("carries the whole text when the diff gives up", () => {
    lie.mode = "abort";
    expect(revise("a\n", [{ name: "contract", text: "b\n" }])).toStrictEqual({ form: "full", text: "b\n" });
  });

  it("still carries a diff when the lie does not touch it (no changed run after a common one)", () => {
    lie.mode = "shift";
    const change = revise("a\n", [{ name: "contract", text: "b\na\n" }]);
    expect(change.form).toBe("diff");
  });
});
