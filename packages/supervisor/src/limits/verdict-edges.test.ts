import { describe, expect, it } from "vitest";
import { countingGroup } from "./counting-group.test-helper.js";
import { cpuVerdict, limitVerdict } from "./verdict.js";

// What ended a worker, read from the mechanism (C17): each counter against its mark, each signal
// by name or as bwrap's 128+N, and what each verdict says.
const group = (counters: { oom?: number; refused?: number }) => countingGroup(counters);
const killed = { code: null, signal: "SIGKILL" };

describe("limitVerdict edges", () => {
  it("says which limit and which mechanism", () => {
    expect(limitVerdict("cgroup2", { memoryBytes: 128 << 20 }, group({ oom: 1 }), { cpuMs: 0, oomKills: 0, forkRefusals: 0 }, killed)).toEqual({
      reason: "memory_limit",
      detail: "the tree reached the memory limit (128MiB) and the kernel's OOM killer ended it (cgroup2)",
    });
    expect(limitVerdict("cgroup2", { procs: 16 }, group({ refused: 7 }), { cpuMs: 0, oomKills: 0, forkRefusals: 4 }, killed)).toEqual({
      reason: "procs_limit",
      detail: "the tree reached the procs limit (16): the kernel refused 3 fork(s) and the worker died (cgroup2)",
    });
    expect(limitVerdict("rlimit", { cpuMs: 90_000 }, undefined, undefined, { code: null, signal: "SIGXCPU" })).toEqual({
      reason: "cpu_limit",
      detail: "a process reached the cpu limit (90s per process, RLIMIT_CPU) and died of SIGXCPU",
    });
    expect(limitVerdict("rlimit", { fileBytes: 4096 }, undefined, undefined, { code: 128 + 25, signal: null })).toEqual({
      reason: "file_limit",
      detail: "a write passed the file limit (4KiB, RLIMIT_FSIZE) and the process died of SIGXFSZ",
    });
  });

  it("a mark without counters counts from 0", () => {
    const mark = { cpuMs: 0 } as never;
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20 }, group({ oom: 1 }), mark, killed)?.reason).toBe("memory_limit");
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20 }, group({ oom: 0 }), mark, killed)).toBeUndefined();
    expect(limitVerdict("cgroup2", { procs: 4 }, group({ refused: 2 }), mark, killed)?.detail).toContain("refused 2 fork(s)");
    expect(limitVerdict("cgroup2", { procs: 4 }, group({ refused: 0 }), mark, killed)).toBeUndefined();
  });

  it("a counter the group cannot read, a group without a mark, or a mark without a group says nothing", () => {
    const mark = { cpuMs: 0, oomKills: 0, forkRefusals: 0 };
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20, procs: 4 }, group({}), mark, killed)).toBeUndefined();
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20 }, group({ oom: 5 }), undefined, killed)).toBeUndefined();
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20 }, undefined, mark, killed)).toBeUndefined();
  });

  it("each counter counts only for its own limit", () => {
    const mark = { cpuMs: 0, oomKills: 0, forkRefusals: 0 };
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20 }, group({ oom: 0, refused: 3 }), mark, killed)).toBeUndefined();
    expect(limitVerdict("cgroup2", { procs: 4 }, group({ oom: 3, refused: 0 }), mark, killed)).toBeUndefined();
  });

  it("memory first when both counters moved", () => {
    const mark = { cpuMs: 0, oomKills: 0, forkRefusals: 0 };
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20, procs: 4 }, group({ oom: 1, refused: 1 }), mark, killed)?.reason).toBe("memory_limit");
    expect(limitVerdict("cgroup2", { memoryBytes: 1 << 20, procs: 4 }, group({ oom: 0, refused: 1 }), mark, killed)?.reason).toBe("procs_limit");
  });

  it("SIGXCPU is the cpu limit under rlimits only (a cgroup's CPU limit is the host's own kill)", () => {
    expect(limitVerdict("cgroup2", { cpuMs: 1000 }, group({}), { cpuMs: 0 } as never, { code: null, signal: "SIGXCPU" })).toBeUndefined();
    expect(limitVerdict("rlimit", {}, undefined, undefined, { code: null, signal: "SIGXCPU" })).toBeUndefined();
    expect(limitVerdict("rlimit", { cpuMs: 1000 }, undefined, undefined, { code: 128 + 25, signal: null })).toBeUndefined();
  });

  it("SIGXFSZ by name, without a file limit nothing", () => {
    expect(limitVerdict("rlimit", { fileBytes: 1 }, undefined, undefined, { code: null, signal: "SIGXFSZ" })?.reason).toBe("file_limit");
    expect(limitVerdict("rlimit", {}, undefined, undefined, { code: null, signal: "SIGXFSZ" })).toBeUndefined();
    expect(limitVerdict("rlimit", { fileBytes: 1 }, undefined, undefined, { code: 128 + 24, signal: null })).toBeUndefined();
  });

  it("exit 0 survived whatever was refused; a nonzero exit or a signal is a death", () => {
    const mark = { cpuMs: 0, oomKills: 0, forkRefusals: 0 };
    expect(limitVerdict("cgroup2", { memoryBytes: 1 }, group({ oom: 3 }), mark, { code: 0, signal: null })).toBeUndefined();
    expect(limitVerdict("cgroup2", { memoryBytes: 1 }, group({ oom: 3 }), mark, { code: 1, signal: null })?.reason).toBe("memory_limit");
    expect(limitVerdict("cgroup2", { memoryBytes: 1 }, group({ oom: 3 }), mark, { code: 0, signal: "SIGKILL" })?.reason).toBe("memory_limit");
  });
});

describe("cpuVerdict", () => {
  it("says what the tree used and the limit", () => {
    expect(cpuVerdict({ cpuMs: 2000 }, 2150, "cgroup2")).toEqual({ reason: "cpu_limit", detail: "the tree used 2150 ms of CPU time, the cpu limit is 2s (cgroup2)" });
    expect(cpuVerdict({}, 5, "cgroup1").detail).toBe("the tree used 5 ms of CPU time, the cpu limit is 0h (cgroup1)");
  });
});
