import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { indexSkills, loadSkill } from "../src/index";
import { buildTree, loadVectors, tempDir, type TreeEntry } from "./tree";

interface IndexCase {
  description: string;
  input: { builtin: TreeEntry[] | null; managed: TreeEntry[] | null };
  expected: {
    skills: { id: string; digest: string; root: "builtin" | "managed" }[];
    refused: { name: string; root: "builtin" | "managed"; reason: string }[];
    revision: string;
  };
}

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe("fixtures/skills/index.json", () => {
  for (const vector of loadVectors<IndexCase>("index.json")) {
    it(vector.description, async () => {
      const base = await tempDir();
      made.push(base);
      const dirs = { builtin: join(base, "builtin"), managed: join(base, "managed") };
      if (vector.input.builtin) await buildTree(dirs.builtin, vector.input.builtin);
      if (vector.input.managed) await buildTree(dirs.managed, vector.input.managed);
      const index = await indexSkills({ builtinDir: dirs.builtin, managedDir: dirs.managed });
      expect(index.skills).toEqual(vector.expected.skills.map((s) => ({ ...s, path: join(dirs[s.root], s.id) })));
      expect(index.refused).toEqual(
        vector.expected.refused.map((r) => ({ ...r, path: join(dirs[r.root], r.name) })),
      );
      expect(index.revision).toBe(vector.expected.revision);
      // Every admitted skill loads with its indexed digest; every refused name is not found.
      for (const skill of index.skills) {
        await expect(loadSkill(index, skill.id)).resolves.toMatchObject({ id: skill.id, digest: skill.digest });
      }
      for (const refusal of index.refused) {
        await expect(loadSkill(index, refusal.name)).rejects.toMatchObject({ code: "SKILL_NOT_FOUND" });
      }
    });
  }
});
