import { afterEach, describe, expect, it } from "vitest";
import { defaultSkillRoots } from "./roots";

describe("defaultSkillRoots without an explicit env reads this process's environment", () => {
  const saved = process.env.KLBR_SKILLS_DIR;
  afterEach(() => {
    if (saved === undefined) delete process.env.KLBR_SKILLS_DIR;
    else process.env.KLBR_SKILLS_DIR = saved;
  });

  it("KLBR_SKILLS_DIR set, empty, unset", () => {
    process.env.KLBR_SKILLS_DIR = "/from/env";
    expect(defaultSkillRoots({ workspace: "/w", data: "/d" })).toEqual({ builtinDir: "/from/env", managedDir: "/d/skills" });
    process.env.KLBR_SKILLS_DIR = "";
    expect(defaultSkillRoots({ workspace: "/w", data: "/d" }).builtinDir).toBe("/w/skills");
    delete process.env.KLBR_SKILLS_DIR;
    expect(defaultSkillRoots({ workspace: "/w", data: "/d" }).builtinDir).toBe("/w/skills");
    // An explicit env is the whole environment: the process's value is not consulted.
    process.env.KLBR_SKILLS_DIR = "/from/env";
    expect(defaultSkillRoots({ workspace: "/w", data: "/d", env: {} }).builtinDir).toBe("/w/skills");
  });
});
