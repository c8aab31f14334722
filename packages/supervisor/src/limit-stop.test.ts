import { describe, expect, it } from "vitest";
import { limitStop, stopAfterDeath } from "./limit-stop.js";
import type { LimitVerdict } from "./limits/index.js";
import type { StopInfo } from "./records.js";

const exited: StopInfo = { reason: "worker_exited", detail: "the worker process exited", kind: "invalidated" };
const memory: LimitVerdict = { reason: "memory_limit", detail: "the tree reached the memory limit" };

describe("a limit as a generation's stop reason (C17)", () => {
  it("names the limit and says the namespace is gone", () => {
    expect(limitStop(memory)).toEqual({ reason: "memory_limit", detail: "the tree reached the memory limit; the namespace is gone", kind: "invalidated" });
  });

  it("a death the host did not ask for takes the limit the mechanism recorded as its reason", () => {
    expect(stopAfterDeath(exited, () => memory)).toEqual(limitStop(memory));
    expect(stopAfterDeath(exited, () => undefined)).toBe(exited);
  });

  it("a file limit is not a stop reason, and a stop already named by the limit keeps its detail", () => {
    expect(stopAfterDeath(exited, () => ({ reason: "file_limit", detail: "SIGXFSZ" }))).toBe(exited);
    const watched: StopInfo = { reason: "cpu_limit", detail: "the tree used 2100 ms of CPU time; the namespace is gone", kind: "invalidated" };
    expect(stopAfterDeath(watched, () => ({ reason: "cpu_limit", detail: "other" }))).toBe(watched);
  });

  it("a stop the host asked for keeps its reason, and the verdict is not even read", () => {
    for (const kind of ["requested", "shutdown"] as const) {
      const stop: StopInfo = { reason: "hard_stop", detail: "asked", kind };
      expect(stopAfterDeath(stop, () => expect.unreachable("the verdict was read"))).toBe(stop);
    }
  });
});
