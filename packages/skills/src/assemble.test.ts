import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleIndex, type SkillCandidate } from "./assemble";
import { skillDigest } from "./digest";

const digest = skillDigest(new Uint8Array());
const ok = (name: string, root: "builtin" | "managed"): SkillCandidate => ({
  name,
  root,
  path: `/${root}/${name}`,
  verdict: { ok: true, digest },
});

describe("assembleIndex", () => {
  it("sorts refusal names by UTF-8 bytes, not UTF-16 units", () => {
    // In UTF-16 units U+1F600 (0xD83D...) sorts before U+FF61; in UTF-8 bytes (F0... vs EF...) it sorts after.
    const names = ["\u{1F600}", "\uFF61", "Z", "z"];
    const index = assembleIndex(
      names.map((name) => ({ name, root: "managed", path: `/m/${name}`, verdict: { ok: false, reason: "invalid_id" } })),
    );
    const expected = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(index.refused.map((r) => r.name)).toEqual(expected);
    expect(expected).not.toEqual([...names].sort());
  });

  it("does not depend on the order candidates arrive in", () => {
    const nameArb = fc.constantFrom("a", "b", "c", "d", "Bad");
    const candidateArb = fc.record({
      name: nameArb,
      root: fc.constantFrom("builtin" as const, "managed" as const),
      ok: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(candidateArb, { selector: (c) => `${c.root}/${c.name}` }),
        fc.func(fc.integer()),
        (specs, key) => {
          const candidates = specs.map(({ name, root, ok: good }): SkillCandidate =>
            good && name !== "Bad"
              ? ok(name, root)
              : { name, root, path: `/${root}/${name}`, verdict: { ok: false, reason: name === "Bad" ? "invalid_id" : "title_mismatch" } },
          );
          const shuffled = [...candidates].sort((a, b) => key(`${a.root}/${a.name}`) - key(`${b.root}/${b.name}`));
          const index = assembleIndex(candidates);
          expect(assembleIndex(shuffled)).toEqual(index);
          // No admitted id is named in the other root.
          for (const skill of index.skills) {
            expect(specs.filter((s) => s.name === skill.id)).toHaveLength(1);
          }
        },
      ),
    );
  });
});
