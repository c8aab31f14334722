import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { descendants, isAlive, killTree, parseProcStat, readProc } from "./tree.js";

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
