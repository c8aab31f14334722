import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_SKILL_BYTES } from "./constants";
import { readSkillFile } from "./read";

// What readSkillFile reports for each thing a skill directory's SKILL.md can be.
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "klbr-read-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readSkillFile", () => {
  it("reads a file's bytes exactly, up to the limit", async () => {
    await writeFile(join(dir, "SKILL.md"), Buffer.from([0x23, 0x20, 0x61, 0x00, 0xff]));
    expect(await readSkillFile(dir)).toEqual({ kind: "bytes", bytes: Buffer.from([0x23, 0x20, 0x61, 0x00, 0xff]) });
    await writeFile(join(dir, "SKILL.md"), Buffer.alloc(MAX_SKILL_BYTES, 0x61));
    const full = await readSkillFile(dir);
    expect(full.kind === "bytes" && full.bytes.length).toBe(MAX_SKILL_BYTES);
    await writeFile(join(dir, "SKILL.md"), Buffer.alloc(MAX_SKILL_BYTES + 1, 0x61));
    expect(await readSkillFile(dir)).toEqual({ kind: "oversize" });
    await writeFile(join(dir, "SKILL.md"), "");
    expect(await readSkillFile(dir)).toEqual({ kind: "bytes", bytes: Buffer.alloc(0) });
  });

  it("a symlink is `symlink`, even to a good file", async () => {
    await writeFile(join(dir, "real.md"), "# a\n");
    await symlink(join(dir, "real.md"), join(dir, "SKILL.md"));
    expect(await readSkillFile(dir)).toEqual({ kind: "symlink" });
  });

  it("absent, a directory, a FIFO (never waited on), or a directory that is a file: `missing`", async () => {
    expect(await readSkillFile(dir)).toEqual({ kind: "missing" });
    await mkdir(join(dir, "SKILL.md"));
    expect(await readSkillFile(dir)).toEqual({ kind: "missing" });
    await rm(join(dir, "SKILL.md"), { recursive: true });
    execFileSync("mkfifo", [join(dir, "SKILL.md")]);
    expect(await readSkillFile(dir)).toEqual({ kind: "missing" });
    await writeFile(join(dir, "plain"), "x");
    expect(await readSkillFile(join(dir, "plain"))).toEqual({ kind: "missing" });
  });

  it("a path the system cannot open is `unreadable` with the system's code", async () => {
    const tooLong = `${dir}/${"d/".repeat(2100)}`;
    expect(await readSkillFile(tooLong)).toEqual({ kind: "unreadable", code: "ENAMETOOLONG" });
  });
});
