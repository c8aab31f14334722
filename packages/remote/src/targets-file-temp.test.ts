// writeTargets' temporary file is created exclusively: a name that is already there (here a planted
// symlink; the name's 48 random bits are fixed by a stand-in randomBytes) is refused, never
// written through.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { targetsPath, writeTargets } from "./targets-file.js";

vi.mock("node:crypto", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:crypto")>()),
  randomBytes: (n: number) => Buffer.alloc(n, 0xab),
}));

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("a temporary name that already exists (a planted symlink) is EEXIST, and what it points to is untouched", () => {
  dir = mkdtempSync("/tmp/krt-");
  const victim = join(dir, "victim");
  writeFileSync(victim, "keep me");
  symlinkSync(victim, `${targetsPath(dir)}.abababababab.tmp`);
  expect(() => writeTargets(dir!, { targets: [] })).toThrow(/EEXIST/);
  expect(readFileSync(victim, "utf8")).toBe("keep me");
  expect(existsSync(targetsPath(dir))).toBe(false);
});
