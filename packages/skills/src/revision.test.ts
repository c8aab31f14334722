import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors } from "../test/tree";
import { skillDigest } from "./digest";
import { skillSetRevision } from "./revision";
import type { SkillDigestEntry } from "./types";

type RevisionCase =
  | { description: string; input: SkillDigestEntry[]; expected: string }
  | { description: string; input: SkillDigestEntry[]; error: { code: string } };

describe("fixtures/skills/revision.json", () => {
  for (const vector of loadVectors<RevisionCase>("revision.json")) {
    it(vector.description, () => {
      if ("error" in vector) {
        expect(() => skillSetRevision(vector.input)).toThrow(expect.objectContaining({ code: vector.error.code }));
      } else {
        expect(skillSetRevision(vector.input)).toBe(vector.expected);
      }
    });
  }
});

const idArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/);
const setArb = fc.uniqueArray(fc.record({ id: idArb, body: fc.uint8Array({ maxLength: 64 }) }), {
  selector: (entry) => entry.id,
  maxLength: 12,
});

function entries(set: { id: string; body: Uint8Array }[]): SkillDigestEntry[] {
  return set.map(({ id, body }) => ({ id, digest: skillDigest(body) }));
}

describe("skillSetRevision properties", () => {
  it("does not depend on input order", () => {
    fc.assert(
      fc.property(setArb, fc.func(fc.integer()), (set, key) => {
        const shuffled = [...set].sort((a, b) => key(a.id) - key(b.id));
        expect(skillSetRevision(entries(shuffled))).toBe(skillSetRevision(entries(set)));
      }),
    );
  });

  it("changes when any body byte changes", () => {
    fc.assert(
      fc.property(
        setArb.filter((set) => set.some((entry) => entry.body.length > 0)),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (set, pick, delta) => {
          const withBytes = set.filter((entry) => entry.body.length > 0);
          const target = withBytes[pick % withBytes.length]!;
          const body = Uint8Array.from(target.body);
          const at = pick % body.length;
          body[at] = (body[at]! + delta) % 256;
          const changed = set.map((entry) => (entry === target ? { id: entry.id, body } : entry));
          expect(skillSetRevision(entries(changed))).not.toBe(skillSetRevision(entries(set)));
        },
      ),
    );
  });

  it("changes when a skill is added, removed or renamed", () => {
    fc.assert(
      fc.property(setArb.filter((set) => set.length > 0), idArb, (set, other) => {
        const base = skillSetRevision(entries(set));
        expect(skillSetRevision(entries(set.slice(1)))).not.toBe(base);
        if (!set.some((entry) => entry.id === other)) {
          expect(skillSetRevision(entries([...set, { id: other, body: new Uint8Array() }]))).not.toBe(base);
          const renamed = [{ id: other, body: set[0]!.body }, ...set.slice(1)];
          expect(skillSetRevision(entries(renamed))).not.toBe(base);
        }
      }),
    );
  });

  it("matches an independent reading of the definition", () => {
    fc.assert(
      fc.property(setArb, (set) => {
        const sorted = [...set].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const hash = createHash("sha256");
        for (const { id, body } of sorted) {
          const prefix = Buffer.alloc(8);
          prefix.writeUInt32BE(id.length, 4);
          hash.update(prefix).update(id, "ascii").update(createHash("sha256").update(body).digest());
        }
        expect(skillSetRevision(entries(set))).toBe(hash.digest("hex"));
      }),
    );
  });
});
