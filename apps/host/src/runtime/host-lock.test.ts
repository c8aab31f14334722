import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { tsNode } from "../../test/ts-child";
import { acquireHostLock, holderFile } from "./host-lock";

const dirs: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function lockFile(): string {
  const dir = mkdtempSync("/tmp/klbr-lock-");
  dirs.push(dir);
  return join(dir, "klbr.lock");
}

const starter = fileURLToPath(new URL("./host-lock-starter.ts", import.meta.url));

/** A separate process that takes the lock on "go" and reports; it holds until its stdin ends. */
function startStarter(file: string): { child: ChildProcessWithoutNullStreams; lines: AsyncIterator<string> } {
  const { file: node, args } = tsNode(starter, file);
  const child = spawn(node, args, { stdio: "pipe" });
  children.push(child);
  return { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator]() };
}
async function next(lines: AsyncIterator<string>): Promise<string> {
  const { value, done } = await lines.next();
  if (done) throw new Error("the starter ended without a line");
  return value;
}

describe("acquireHostLock", () => {
  test("one holder at a time; the release lets the next one in", () => {
    const file = lockFile();
    const release = acquireHostLock(file);
    expect(readFileSync(holderFile(file), "utf8")).toBe(`${process.pid}\n`);
    expect(() => acquireHostLock(file)).toThrow(expect.objectContaining({ code: "HOST_ALREADY_RUNNING", message: expect.stringContaining(`pid ${process.pid}`) }));
    release();
    expect(existsSync(holderFile(file))).toBe(false);
    // The lock file stays: removing it would let a late starter lock a second inode.
    expect(existsSync(file)).toBe(true);
    acquireHostLock(file)();
  });

  test("a pid file an older klbr left is not a lock", () => {
    const file = lockFile();
    writeFileSync(file, `${process.pid}\n`);
    acquireHostLock(file)();
  });

  test("a lock whose holder was killed -9 is free at once, and a second process cannot take a held one", async () => {
    const file = lockFile();
    const holder = startStarter(file);
    expect(await next(holder.lines)).toBe("ready");
    holder.child.stdin.write("go\n");
    expect(await next(holder.lines)).toBe("won");
    expect(() => acquireHostLock(file)).toThrow(expect.objectContaining({ code: "HOST_ALREADY_RUNNING", message: expect.stringContaining(`pid ${holder.child.pid}`) }));
    const exited = new Promise((resolve) => holder.child.once("exit", resolve));
    holder.child.kill("SIGKILL");
    await exited;
    acquireHostLock(file)();
  });

  test("20 concurrent starters (separate processes) on a stale lock: exactly one wins", { timeout: 120_000 }, async () => {
    const file = lockFile();
    // The stale lock: a holder killed -9 while holding it.
    const stale = startStarter(file);
    expect(await next(stale.lines)).toBe("ready");
    stale.child.stdin.write("go\n");
    expect(await next(stale.lines)).toBe("won");
    const gone = new Promise((resolve) => stale.child.once("exit", resolve));
    stale.child.kill("SIGKILL");
    await gone;
    const starters = Array.from({ length: 20 }, () => startStarter(file));
    // A barrier: every process is loaded and waiting before any of them tries.
    for (const s of starters) expect(await next(s.lines)).toBe("ready");
    for (const s of starters) s.child.stdin.write("go\n");
    const outcomes = await Promise.all(starters.map((s) => next(s.lines)));
    expect(outcomes.filter((o) => o === "won")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "lost:HOST_ALREADY_RUNNING")).toHaveLength(19);
    for (const s of starters) s.child.stdin.end();
    await Promise.all(starters.map((s) => new Promise((resolve) => (s.child.exitCode !== null ? resolve(null) : s.child.once("exit", resolve)))));
  });
});
