import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { indexSkills, materializeSkills, skillDigest } from "../src/index";
import { buildTree, tempDir } from "./tree";

const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));
const PYTHON = process.env["KLBR_PYTHON"] || "python3";

// One Python process installs every file it is given, in order, and reports per file the
// revision it returned, or the error code, plus each registered module's doc digest.
const SCRIPT = `
import hashlib, json, sys
from klbr.skill_loader import SkillError, install_skills
results = []
for path in sys.argv[1:]:
    try:
        revision = install_skills(path)
    except SkillError as error:
        results.append({"error": error.code})
        continue
    import klbr.skills
    docs = {i: hashlib.sha256(sys.modules["klbr.skills." + i].__doc__.encode()).hexdigest() for i in klbr.skills.__all__}
    results.append({"revision": revision, "docs": docs})
print(json.dumps(results))
`;

interface PythonResult {
  revision?: string;
  error?: string;
  docs?: Record<string, string>;
}

function installInPython(paths: string[]): PythonResult[] {
  const run = spawnSync(PYTHON, ["-B", "-c", SCRIPT, ...paths], {
    env: { ...process.env, PYTHONPATH: PYTHON_DIR },
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`python failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as PythonResult[];
}

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe("TypeScript materializes, Python installs", () => {
  it("reports the same revision and the same bodies, and deletes the file", async () => {
    const base = await tempDir();
    made.push(base);
    const roots = { builtinDir: join(base, "builtin"), managedDir: join(base, "managed") };
    await buildTree(roots.builtinDir, [
      { path: "workspace/SKILL.md", text: "# workspace\n\nHow the workspace is laid out.\n" },
      { path: "odd/SKILL.md", text: "\r\n# odd\r\n\u0000 ünï ✓ 𝄞\r\n" },
      { path: "Bad/SKILL.md", text: "# Bad\n" },
    ]);
    await buildTree(roots.managedDir, [{ path: "deploy/SKILL.md", text: "# deploy\nsteps\n" }]);
    const index = await indexSkills(roots);
    expect(index.skills.map((s) => s.id)).toEqual(["deploy", "odd", "workspace"]);
    const path = await materializeSkills(index, base);
    const [result] = installInPython([path]);
    expect(result).toEqual({
      revision: index.revision,
      docs: Object.fromEntries(index.skills.map((s) => [s.id, s.digest])),
    });
    expect(existsSync(path)).toBe(false);
  });

  it("agrees on random skill sets", async () => {
    const base = await tempDir();
    made.push(base);
    const idArb = fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/);
    const sets = fc.sample(
      fc.uniqueArray(fc.record({ id: idArb, rest: fc.string({ unit: "grapheme", maxLength: 120 }) }), {
        selector: (s) => s.id,
        maxLength: 8,
      }),
      25,
    );
    const expected: PythonResult[] = [];
    const paths: string[] = [];
    for (const [n, set] of sets.entries()) {
      const roots = { builtinDir: join(base, `b${n}`), managedDir: join(base, `m${n}`) };
      // Split the set across both roots so the namespace join is exercised too.
      await buildTree(roots.builtinDir, set.filter((_, i) => i % 2 === 0).map(({ id, rest }) => ({ path: `${id}/SKILL.md`, text: `# ${id}\n${rest}` })));
      await buildTree(roots.managedDir, set.filter((_, i) => i % 2 === 1).map(({ id, rest }) => ({ path: `${id}/SKILL.md`, text: `# ${id}\n${rest}` })));
      const index = await indexSkills(roots);
      expect(index.skills).toHaveLength(set.length);
      const out = join(base, `out${n}`);
      await mkdir(out);
      paths.push(await materializeSkills(index, out));
      expected.push({
        revision: index.revision,
        docs: Object.fromEntries(set.map(({ id, rest }) => [id, skillDigest(Buffer.from(`# ${id}\n${rest}`, "utf8"))])),
      });
    }
    expect(installInPython(paths)).toEqual(expected);
  });
});
