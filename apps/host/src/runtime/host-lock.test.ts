import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { acquireHostLock } from "./host-lock";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function lockFile(): string {
  const dir = mkdtempSync("/tmp/klbr-lock-");
  dirs.push(dir);
  return join(dir, "klbr.lock");
}

describe("acquireHostLock", () => {
  test("one holder at a time; the release lets the next one in", () => {
    const file = lockFile();
    const release = acquireHostLock(file);
    expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
    expect(() => acquireHostLock(file)).toThrow(expect.objectContaining({ code: "HOST_ALREADY_RUNNING", message: expect.stringContaining(String(process.pid)) }));
    release();
    expect(existsSync(file)).toBe(false);
    acquireHostLock(file)();
  });

  test("a lock left by a process that is gone (kill -9) is stale and taken over", () => {
    const file = lockFile();
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    writeFileSync(file, `${gone.stdout}\n`);
    const release = acquireHostLock(file);
    expect(readFileSync(file, "utf8")).toBe(`${process.pid}\n`);
    release();
  });

  test("a lock naming this pid that this process does not hold was left by an earlier process with the same pid", () => {
    const file = lockFile();
    writeFileSync(file, `${process.pid}\n`);
    const release = acquireHostLock(file);
    expect(() => acquireHostLock(file)).toThrow(expect.objectContaining({ code: "HOST_ALREADY_RUNNING" }));
    release();
    expect(existsSync(file)).toBe(false);
  });

  test("an unreadable holder is stale too", () => {
    const file = lockFile();
    writeFileSync(file, "not a pid\n");
    acquireHostLock(file)();
  });

  test("a release does not remove a lock someone else took over meanwhile", () => {
    const file = lockFile();
    const release = acquireHostLock(file);
    writeFileSync(file, "1\n");
    release();
    expect(readFileSync(file, "utf8")).toBe("1\n");
  });
});
