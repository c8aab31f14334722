import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { descendants, isAlive, killTree, parseProcStat, readProc, recordRoot } from "./tree.js";

describe("parseProcStat", () => {
  it("reads pid, state, ppid and pgid even when the name holds ') '", () => {
    expect(parseProcStat("42 (we ird) (x) S 7 42 42 0 -1")).toMatchObject({ pid: 42, ppid: 7, pgid: 42, state: "S" });
  });
  it("returns undefined for garbage", () => {
    expect(parseProcStat("nonsense")).toBeUndefined();
  });
});

describe("descendants / killTree", () => {
  it("finds and kills a grandchild that moved to its own session", async () => {
    const child = spawn("sh", ["-c", "setsid sleep 1000 & sleep 1000 & wait"], { detached: true, stdio: "ignore" });
    const pid = child.pid as number;
    let found: number[] = [];
    const ready = () => found.length >= 2 && found.some((p) => readProc(p)?.pgid === p);
    for (let i = 0; i < 2000 && !ready(); i++) {
      await new Promise((r) => setTimeout(r, 10));
      found = descendants(pid).map((p) => p.pid);
    }
    expect(found.length).toBeGreaterThanOrEqual(2);
    // one grandchild leads its own group (it called setsid), yet it is found as a descendant
    expect(found.some((p) => readProc(p)?.pgid === p)).toBe(true);
    const left = await killTree(pid);
    expect(left).toEqual([]);
    for (const p of found) expect(isAlive(p)).toBe(false);
  });
});

describe("a root pid that was reaped and reused", () => {
  it("is neither signalled nor walked, nor is the group it now leads", async () => {
    // Stands in for a reused pid: `known` recorded another start time for it than the live one.
    const other = spawn("sh", ["-c", "sleep 1000 & wait"], { detached: true, stdio: "ignore" });
    const pid = other.pid as number;
    try {
      let kids: number[] = [];
      for (let i = 0; i < 2000 && kids.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        kids = descendants(pid).map((p) => p.pid);
      }
      expect(kids).toHaveLength(1);
      const known = new Map([[pid, readProc(pid)!.start + 1]]);
      expect(await killTree(pid, known, 1000)).toEqual([]);
      expect(known.size).toBe(1);
      expect(isAlive(pid)).toBe(true);
      expect(isAlive(kids[0]!)).toBe(true);
      // Recorded with its own start time, the same root is the tree to kill.
      expect(await killTree(pid, recordRoot(pid))).toEqual([]);
      expect(isAlive(pid)).toBe(false);
      expect(isAlive(kids[0]!)).toBe(false);
    } finally {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
});
