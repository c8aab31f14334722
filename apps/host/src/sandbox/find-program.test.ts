import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findProgram } from "./find-program";

const dir = mkdtempSync("/tmp/klbr-fp-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, "bin"));
writeFileSync(join(dir, "bin", "tool"), "#!/bin/sh\n");
chmodSync(join(dir, "bin", "tool"), 0o755);
writeFileSync(join(dir, "bin", "plain"), "not executable");
mkdirSync(join(dir, "bin", "folder"));

describe("findProgram", () => {
  it("searches PATH for a bare name, in order, skipping what is not an executable file", () => {
    expect(findProgram("tool", `/nonexistent:${join(dir, "bin")}`, "/")).toBe(join(dir, "bin", "tool"));
    expect(findProgram("plain", join(dir, "bin"), "/")).toBeUndefined();
    expect(findProgram("folder", join(dir, "bin"), "/")).toBeUndefined();
    expect(findProgram("sh", "/usr/bin:/bin", "/")).toMatch(/\/sh$/);
    expect(findProgram("tool", undefined, "/")).toBeUndefined();
  });

  it("takes a name with a slash relative to cwd, never from PATH", () => {
    expect(findProgram("./bin/tool", "/usr/bin", dir)).toBe(join(dir, "bin", "tool"));
    expect(findProgram("bin/tool", "", dir)).toBe(join(dir, "bin", "tool"));
    expect(findProgram("./tool", join(dir, "bin"), dir)).toBeUndefined();
  });
});
