import { spawnSync } from "node:child_process";
import { chmod, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { indexSkills } from "../src/index";
import { buildTree, tempDir } from "./tree";

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** uid/gid of `nobody`: root reads any file, so the unreadable case is run as an unprivileged user. */
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const tsx = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));
const script = fileURLToPath(new URL("./index-as-json.ts", import.meta.url));

/** Index the roots in this process, or (as root) in a child running as nobody. */
function indexAsUnprivileged(roots: { builtinDir: string; managedDir: string }): Promise<unknown> {
  if (!isRoot) return indexSkills(roots);
  const child = spawnSync(tsx, ["--conditions=@klbr/source", script, roots.builtinDir, roots.managedDir], {
    uid: NOBODY,
    gid: NOBODY,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", TSX_DISABLE_CACHE: "1" },
  });
  if (child.status !== 0) throw new Error(`index child failed (${child.status}): ${child.stderr}`);
  return Promise.resolve(JSON.parse(child.stdout));
}

describe("an unreadable SKILL.md (C4)", () => {
  it("is refused as unreadable and the rest of the index stands", async () => {
    const base = await tempDir();
    made.push(base);
    await buildTree(join(base, "b"), [
      { path: "alpha/SKILL.md", text: "# alpha\n" },
      { path: "locked/SKILL.md", text: "# locked\n" },
    ]);
    await buildTree(join(base, "m"), [{ path: "gamma/SKILL.md", text: "# gamma\n" }]);
    // Everything traversable by another uid, except the one file.
    for (const dir of [base, join(base, "b"), join(base, "m"), join(base, "b", "alpha"), join(base, "b", "locked"), join(base, "m", "gamma")]) await chmod(dir, 0o755);
    for (const file of [join(base, "b", "alpha", "SKILL.md"), join(base, "m", "gamma", "SKILL.md")]) await chmod(file, 0o644);
    await chmod(join(base, "b", "locked", "SKILL.md"), 0o000);
    const index = (await indexAsUnprivileged({ builtinDir: join(base, "b"), managedDir: join(base, "m") })) as {
      skills: Array<{ id: string }>;
      refused: Array<{ name: string; root: string; reason: string }>;
    };
    expect(index.skills.map((s) => s.id)).toEqual(["alpha", "gamma"]);
    expect(index.refused).toEqual([expect.objectContaining({ name: "locked", root: "builtin", reason: "unreadable" })]);
  });
});
