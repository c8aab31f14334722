import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { descendants, isAlive, killTreeOnce, listProcs, parseProcStat, readProc, recordRoot, rememberBelow, rememberTree, type ProcEntry } from "./tree.js";

// The walks over a snapshot, on snapshots made up here (issue 38: the process tree's mutants).

const p = (pid: number, ppid: number, pgid = pid, start = pid * 10, state = "S"): ProcEntry => ({ pid, ppid, pgid, state, start });

describe("parseProcStat fields", () => {
  it("reads starttime (field 22) and a missing one as 0; refuses a non-number pid, ppid or pgid, or no state", () => {
    const tail = (start: string) => `S 7 8 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 ${start} 1`;
    expect(parseProcStat(`42 (a) ${tail("987")}`)).toEqual({ pid: 42, ppid: 7, pgid: 8, state: "S", start: 987 });
    expect(parseProcStat("42 (a) S 7 8")).toEqual({ pid: 42, ppid: 7, pgid: 8, state: "S", start: 0 });
    expect(parseProcStat(`x (a) ${tail("1")}`)).toBeUndefined();
    expect(parseProcStat("42 (a) S x 8")).toBeUndefined();
    expect(parseProcStat("42 (a) S 7 x")).toBeUndefined();
    expect(parseProcStat("42 (a)")).toBeUndefined();
    expect(parseProcStat("42 )a( S 7 8")).toBeUndefined();
  });
});

describe("descendants over a snapshot", () => {
  it("every generation below the root, breadth first, never the root, its parent or a sibling tree", () => {
    const procs = [p(1, 0), p(10, 1), p(11, 10), p(12, 10), p(13, 11), p(20, 1), p(21, 20)];
    expect(descendants(10, procs).map((e) => e.pid)).toEqual([11, 12, 13]);
    expect(descendants(13, procs)).toEqual([]);
  });

  it("a ppid cycle (a pid reused during the scan) ends", () => {
    expect(descendants(10, [p(10, 11), p(11, 10)]).map((e) => e.pid)).toEqual([11]);
  });
});

describe("rememberTree over a snapshot", () => {
  it("takes descendants and members of groups the root or a known process leads, not other groups", () => {
    const procs = [p(10, 1), p(11, 10), p(12, 1, 10), p(13, 1, 11), p(14, 1, 14), p(15, 1, 99)];
    const known = rememberTree(10, new Map(), procs);
    expect([...known.entries()].sort((a, b) => a[0] - b[0])).toEqual([[11, 110], [12, 120], [13, 130]]);
  });

  it("a group whose leader's pid now names another process is not the known one's", () => {
    // 11 was known with start 110; the live 11 started at 999: group 11's members are someone else's.
    const procs = [p(10, 1), p(11, 1, 11, 999), p(13, 1, 11)];
    expect([...rememberTree(10, new Map([[11, 110]]), procs).keys()]).toEqual([11]);
    // The leader gone, its group lives on: the member is taken.
    expect([...rememberTree(10, new Map([[11, 110]]), [p(10, 1), p(13, 1, 11)]).keys()].sort()).toEqual([11, 13]);
  });

  it("a root whose pid was reused is left alone", () => {
    const known = new Map([[10, 5]]);
    expect(rememberTree(10, known, [p(10, 1), p(11, 10)])).toBe(known);
    expect([...known.keys()]).toEqual([10]);
    // Recorded with its own start time: its tree.
    expect([...rememberTree(10, new Map([[10, 100]]), [p(10, 1), p(11, 10)]).keys()]).toEqual([10, 11]);
  });
});

describe("on this machine", () => {
  it("listProcs holds this process and only numeric entries; readProc of a pid that is none is undefined", () => {
    const procs = listProcs();
    expect(procs.find((e) => e.pid === process.pid)).toMatchObject({ ppid: process.ppid });
    expect(procs.every((e) => Number.isInteger(e.pid) && e.pid > 0)).toBe(true);
    expect(readProc(4_000_000_0)).toBeUndefined();
    expect(isAlive(4_000_000_0)).toBe(false);
    expect(recordRoot(4_000_000_0).size).toBe(0);
    expect(recordRoot(process.pid).get(process.pid)).toBe(readProc(process.pid)!.start);
  });

  it("rememberBelow walks a live root's children files down to its grandchildren; a dead root falls back to the scan", async () => {
    const child = spawn("sh", ["-c", "sleep 1000 & sleep 1000 & wait"], { detached: true, stdio: "ignore" });
    const pid = child.pid!;
    try {
      let kids: number[] = [];
      for (let i = 0; i < 2000 && kids.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 10));
        kids = descendants(pid).map((e) => e.pid);
      }
      const below = rememberBelow(pid);
      expect([...below.keys()].sort()).toEqual([...kids].sort());
      for (const k of kids) expect(below.get(k)).toBe(readProc(k)!.start);
      // Below this process: the sh and both sleeps, and not this process itself.
      const mine = rememberBelow(process.pid);
      expect([...mine.keys()]).toEqual(expect.arrayContaining([pid, ...kids]));
      expect(mine.has(process.pid)).toBe(false);
      // One kill pass: stop, then kill, every one of them; the root too.
      const known = killTreeOnce(pid, recordRoot(pid), true);
      expect([...known.keys()]).toEqual(expect.arrayContaining([pid, ...kids]));
      await new Promise<void>((resolve) => child.once("exit", () => resolve()));
      for (let i = 0; i < 2000 && kids.some(isAlive); i++) await new Promise((r) => setTimeout(r, 5));
      expect(kids.filter(isAlive)).toEqual([]);
      expect(rememberBelow(4_000_000_0).size).toBe(0);
    } finally {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  });
});
