import { describe, expect, it } from "vitest";
import { keeperLimitsArgs } from "./start.js";

describe("keeperLimitsArgs: the host's limits as the remote keeper's rlimits (C17)", () => {
  it("passes memory, cpu, procs and file as rlimits, never tmp (the local sandbox's)", () => {
    const args = keeperLimitsArgs({ memoryBytes: 1 << 30, cpuMs: 2500, procs: 64, fileBytes: 4096, tmpBytes: 1 << 20 });
    expect(args[0]).toBe("--limits");
    expect(JSON.parse(args[1]!)).toEqual({ rlimits: { AS: [1 << 30, 1 << 30], CPU: [3, 4], NPROC: [64, 64], FSIZE: [4096, 4096] } });
  });

  it("nothing without limits, or with tmp alone", () => {
    expect(keeperLimitsArgs(undefined)).toEqual([]);
    expect(keeperLimitsArgs({})).toEqual([]);
    expect(keeperLimitsArgs({ tmpBytes: 1 << 20 })).toEqual([]);
  });
});
