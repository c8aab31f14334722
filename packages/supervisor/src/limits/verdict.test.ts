import { describe, expect, it } from "vitest";
import { nextCheckMs } from "./cpu-watch.js";
import { withGuardLimits } from "./guard-args.js";
import { countingGroup } from "./counting-group.test-helper.js";
import { rlimitsFor } from "./mechanism.js";
import { limitVerdict } from "./verdict.js";

const group = (counters: { oom?: number; refused?: number }) => countingGroup(counters, "cgroup1");

const mark = { cpuMs: 0, oomKills: 1, forkRefusals: 2 };
const killed = { code: null, signal: "SIGKILL" };

describe("limitVerdict: what the mechanism recorded, never a guess", () => {
  it("an OOM kill since the mark ends the worker at memory_limit", () => {
    expect(limitVerdict("cgroup1", { memoryBytes: 64 << 20 }, group({ oom: 2 }), mark, killed)).toMatchObject({ reason: "memory_limit" });
    // The same count as at the cell's start: an earlier kill, not this death.
    expect(limitVerdict("cgroup1", { memoryBytes: 64 << 20 }, group({ oom: 1 }), mark, killed)).toBeUndefined();
  });

  it("a fork refused since the mark, and the worker died: procs_limit; survived (exit 0): nothing", () => {
    expect(limitVerdict("cgroup2", { procs: 8 }, group({ refused: 5 }), mark, { code: 1, signal: null })).toMatchObject({ reason: "procs_limit" });
    expect(limitVerdict("cgroup2", { procs: 8 }, group({ refused: 5 }), mark, { code: 0, signal: null })).toBeUndefined();
  });

  it("a counter for a limit that is not set means nothing", () => {
    expect(limitVerdict("cgroup1", { procs: 8 }, group({ oom: 9 }), mark, killed)).toBeUndefined();
  });

  it("rlimit: SIGXCPU (or 128+24 through bwrap) is cpu_limit; SIGXFSZ is file_limit", () => {
    expect(limitVerdict("rlimit", { cpuMs: 2000 }, undefined, undefined, { code: null, signal: "SIGXCPU" })).toMatchObject({ reason: "cpu_limit" });
    expect(limitVerdict("rlimit", { cpuMs: 2000 }, undefined, undefined, { code: 152, signal: null })).toMatchObject({ reason: "cpu_limit" });
    expect(limitVerdict("rlimit", { cpuMs: 2000 }, undefined, undefined, killed)).toBeUndefined();
    expect(limitVerdict("cgroup1", { fileBytes: 4096 }, group({}), mark, { code: null, signal: "SIGXFSZ" })).toMatchObject({ reason: "file_limit" });
  });
});

describe("rlimitsFor", () => {
  it("maps each limit to its rlimit: CPU in whole seconds, rounded up, SIGKILL one second later", () => {
    expect(rlimitsFor({ memoryBytes: 1 << 30, cpuMs: 1500, procs: 64, fileBytes: 4096, tmpBytes: 1 << 20 })).toEqual({
      AS: [1 << 30, 1 << 30],
      CPU: [2, 3],
      NPROC: [64, 64],
      FSIZE: [4096, 4096],
    });
  });
});

describe("withGuardLimits", () => {
  it("puts --limits before the guard's --, and nothing when there is nothing to apply", () => {
    const guard = ["py", "guard.py", "--status-fd", "3", "--", "cmd", "--", "x"];
    expect(withGuardLimits(guard, { join: ["/g/cgroup.procs"], rlimits: {} })).toEqual([
      "py", "guard.py", "--status-fd", "3", "--limits", '{"join":["/g/cgroup.procs"],"rlimits":{}}', "--", "cmd", "--", "x",
    ]);
    expect(withGuardLimits(guard, { join: [], rlimits: {} })).toEqual(guard);
    expect(withGuardLimits(guard, undefined)).toEqual(guard);
  });
});

describe("nextCheckMs", () => {
  it("reads again when every CPU could have spent what is left, within [20, 500] ms", () => {
    expect(nextCheckMs(10_000, 2)).toBe(500);
    expect(nextCheckMs(600, 2)).toBe(300);
    expect(nextCheckMs(10, 2)).toBe(20);
    expect(nextCheckMs(100, 0)).toBe(100);
  });
});
