import { describe, expect, it } from "vitest";
import type { WorkerGroup } from "./group.js";
import type { LimitsMechanism } from "./mechanism.js";
import { WorkerLimits } from "./worker-limits.js";

// The order a cell's counters are read in against the kernel's: a bomb may be ended before the
// host runs again after sending it (a busy machine), and its death must still be the limit's.
function fixture(): { limits: WorkerLimits; counters: { oom: number; refused: number } } {
  const counters = { oom: 0, refused: 0 };
  const group: WorkerGroup = {
    kind: "cgroup2",
    joinFiles: [],
    cpuMs: () => 0,
    resetPeak: () => undefined,
    peakBytes: () => undefined,
    oomKills: () => counters.oom,
    forkRefusals: () => counters.refused,
    kill: async () => undefined,
    remove: async () => undefined,
  };
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

describe("WorkerLimits: a cell's mark is read before it is sent", () => {
  it("an OOM kill that lands between the send and the host's next step is this cell's memory_limit", () => {
    const { limits, counters } = fixture();
    counters.oom = 1; // an earlier generation's kill in the same group counts for nothing
    limits.cellMark();
    counters.oom = 2; // the worker ran the bomb and the kernel ended it before cellBegin ran
    limits.cellBegin();
    expect(limits.verdict(killed)).toMatchObject({ reason: "memory_limit" });
  });

  it("a fork refusal in the same gap is this cell's procs_limit; a count from before the mark is not", () => {
    const { limits, counters } = fixture();
    counters.refused = 3;
    limits.cellMark();
    limits.cellBegin();
    expect(limits.verdict(killed)).toBeUndefined();
    limits.cellMark();
    counters.refused = 4;
    limits.cellBegin();
    expect(limits.verdict({ code: 1, signal: null })).toMatchObject({ reason: "procs_limit" });
  });
});
