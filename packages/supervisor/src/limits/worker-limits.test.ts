import { describe, expect, it } from "vitest";
import { countingGroup } from "./counting-group.test-helper.js";
import type { LimitsMechanism } from "./mechanism.js";
import { WorkerLimits } from "./worker-limits.js";

// A cell's limit verdict against the counters read at its begin (the supervisor reads them before
// it sends the cell: test/python-sandbox.test.ts and the host's limits tests meet it for real).
function fixture(): { limits: WorkerLimits; counters: { oom: number; refused: number } } {
  const counters = { oom: 0, refused: 0 };
  const group = countingGroup(counters);
  const mechanism: LimitsMechanism = {
    limits: { memoryBytes: 96 << 20, procs: 48 },
    kind: "cgroup2",
    detail: "test",
    skipped: [],
    createGroup: () => group,
    guardLimits: () => ({}) as never,
    close: async () => undefined,
  };
  return { limits: new WorkerLimits(mechanism, "w"), counters };
}

const killed = { code: null, signal: "SIGKILL" };

describe("WorkerLimits: what a cell's verdict compares against is read at its begin", () => {
  it("an OOM kill after the begin is this cell's memory_limit; one before it is not", () => {
    const { limits, counters } = fixture();
    counters.oom = 1; // an earlier generation's kill in the same group counts for nothing
    limits.cellBegin();
    counters.oom = 2; // the worker ran the bomb and the kernel ended it
    expect(limits.verdict(killed)).toMatchObject({ reason: "memory_limit" });
  });

  it("a fork refusal after the begin is this cell's procs_limit; a count from before it is not", () => {
    const { limits, counters } = fixture();
    counters.refused = 3;
    limits.cellBegin();
    expect(limits.verdict(killed)).toBeUndefined();
    limits.cellBegin();
    counters.refused = 4;
    expect(limits.verdict({ code: 1, signal: null })).toMatchObject({ reason: "procs_limit" });
  });
});
