import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeDir, tempDir, writeSource } from "../test/helpers/tree.js";
import { snapshotRelease } from "./release.js";
import { isStaleTemp, sweepStaleTemps, tempPrefix, UNNAMED_TEMP_MAX_AGE_MS } from "./temp-dirs.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

/** A pid that certainly names no running process: a child that has exited and been reaped. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "0"]);
  return child.pid!;
}

function readOnlyTemp(releases: string, name: string): string {
  const dir = path.join(releases, name);
  fs.mkdirSync(path.join(dir, "pol"), { recursive: true });
  fs.writeFileSync(path.join(dir, "pol", "x.py"), "x = 1\n");
  fs.chmodSync(path.join(dir, "pol", "x.py"), 0o444);
  fs.chmodSync(path.join(dir, "pol"), 0o555);
  fs.chmodSync(dir, 0o555);
  return dir;
}

describe("isStaleTemp", () => {
  it("knows a temp directory by its writer's pid, or by its age when it names none", () => {
    const now = Date.now();
    expect(isStaleTemp(`.tmp-${process.pid}-abc`, 0, now)).toBe(false);
    expect(isStaleTemp(`.tmp-${deadPid()}-abc`, now, now)).toBe(true);
    expect(isStaleTemp(".tmp-abcdef", now - UNNAMED_TEMP_MAX_AGE_MS - 1, now)).toBe(true);
    expect(isStaleTemp(".tmp-abcdef", now - 1000, now)).toBe(false);
    expect(isStaleTemp("tmp-1-abc", 0, now)).toBe(false);
    expect(isStaleTemp("a".repeat(64), 0, now)).toBe(false);
  });
});

describe("sweepStaleTemps", () => {
  it("removes what a killed snapshot left (read-only modes included) and nothing in use", () => {
    const releases = tempDir();
    dirs.push(releases);
    const dead = `.tmp-${deadPid()}-k1Ll3d`;
    readOnlyTemp(releases, dead);
    const mine = path.basename(fs.mkdtempSync(tempPrefix(releases)));
    const release = path.join(releases, "0".repeat(64));
    fs.mkdirSync(release);
    const removed = sweepStaleTemps(releases, (dir) => {
      spawnSync("chmod", ["-R", "u+w", dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    });
    expect(removed).toEqual([dead]);
    expect(fs.readdirSync(releases).sort()).toEqual([mine, "0".repeat(64)].sort());
  });

  it("finds nothing in a folder that does not exist", () => {
    const base = tempDir();
    dirs.push(base);
    expect(sweepStaleTemps(path.join(base, "none"), () => undefined)).toEqual([]);
  });
});

describe("snapshotRelease and leftovers", () => {
  it("clears a killed snapshot's temporary directory and leaves no temporary directory of its own", () => {
    const base = tempDir();
    dirs.push(base);
    const draft = path.join(base, "draft");
    fs.mkdirSync(draft);
    writeSource(draft, { "pol/__init__.py": "", "README.md": "# pol\n" });
    fs.writeFileSync(path.join(draft, "manifest.json"), JSON.stringify({ version: 1, hooks: { "attention.plan": "pol:a", "delivery.review": "pol:d" } }));
    const releases = path.join(base, "releases");
    fs.mkdirSync(releases);
    const leftover = `.tmp-${deadPid()}-zzzzzz`;
    readOnlyTemp(releases, leftover);
    const snap = snapshotRelease(draft, releases);
    expect(fs.readdirSync(releases)).toEqual([snap.digest]);
  });
});
