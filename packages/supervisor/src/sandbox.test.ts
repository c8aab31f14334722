import { describe, expect, it } from "vitest";
import { namespaceProcs, signalPinned, wrapCommand } from "./sandbox.js";
import type { ProcEntry } from "./tree.js";

const proc = (pid: number, ppid: number, start = pid * 10): ProcEntry => ({ pid, ppid, pgid: pid, state: "S", start });

describe("wrapCommand", () => {
  const cmd = { file: "/usr/bin/python3", args: ["-m", "klbr.worker", "--socket", "/t/w.sock"], env: { A: "1" } };

  it("puts the prefix before the worker's program and keeps the environment", () => {
    expect(wrapCommand(cmd, ["bwrap", "--ro-bind", "/", "/", "--"])).toEqual({
      file: "bwrap",
      args: ["--ro-bind", "/", "/", "--", "/usr/bin/python3", "-m", "klbr.worker", "--socket", "/t/w.sock"],
      env: { A: "1" },
    });
  });

  it("an empty prefix leaves the command alone; a prefix without a program is refused", () => {
    expect(wrapCommand(cmd, [])).toBe(cmd);
    expect(() => wrapCommand(cmd, [""])).toThrow(RangeError);
  });
});

describe("namespaceProcs", () => {
  it("finds the init (the one child of the spawned process) and the worker (the init's one child)", () => {
    const procs = [proc(1, 0), proc(100, 1), proc(101, 100), proc(102, 101), proc(200, 1)];
    expect(namespaceProcs(100, procs)).toEqual({ init: { pid: 101, start: 1010 }, worker: { pid: 102, start: 1020 } });
  });

  it("anything else is not the promised shape", () => {
    expect(namespaceProcs(100, [proc(100, 1)])).toBeUndefined();
    expect(namespaceProcs(100, [proc(100, 1), proc(101, 100)])).toBeUndefined();
    expect(namespaceProcs(100, [proc(100, 1), proc(101, 100), proc(103, 100), proc(102, 101)])).toBeUndefined();
    expect(namespaceProcs(100, [proc(100, 1), proc(101, 100), proc(102, 101), proc(103, 101)])).toBeUndefined();
  });
});

describe("signalPinned", () => {
  it("never signals a pid whose start time is not the pinned one", () => {
    // This very process, pinned with a start time it does not have: a reused pid.
    expect(signalPinned({ pid: process.pid, start: -1 }, "SIGKILL")).toBe(false);
    expect(signalPinned({ pid: 2 ** 22 + 1, start: 0 }, "SIGKILL")).toBe(false);
  });
});
