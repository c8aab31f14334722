import { describe, expect, it } from "vitest";
import { limitSettings } from "./settings";

function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error("no error");
}

describe("limitSettings", () => {
  it("takes --limit first, KLBR_LIMITS otherwise, none by default", () => {
    expect(limitSettings({}, {})).toEqual({ limits: {}, mechanism: "auto" });
    expect(limitSettings({}, { KLBR_LIMITS: "memory=64MiB" }).limits).toEqual({ memoryBytes: 64 * 1024 * 1024 });
    expect(limitSettings({ limit: ["procs=32"] }, { KLBR_LIMITS: "memory=64MiB" }).limits).toEqual({ procs: 32 });
    expect(limitSettings({ limit: [] }, { KLBR_LIMITS: "cpu=2s" }).limits).toEqual({ cpuMs: 2000 });
    expect(limitSettings({ limit: { fileBytes: 4096 } }, {}).limits).toEqual({ fileBytes: 4096 });
  });

  it("--limit memory=lots is LIMITS_INVALID naming the bad part and where it came from", () => {
    const err = failure(() => limitSettings({ limit: ["cpu=2s,memory=lots"] }, {}));
    expect(err.code).toBe("LIMITS_INVALID");
    expect(err.message).toMatch(/^--limit "memory=lots": "lots" is not a size/);
    expect(failure(() => limitSettings({}, { KLBR_LIMITS: "disk=1" })).message).toMatch(/^KLBR_LIMITS "disk=1": unknown limit "disk"/);
  });

  it("KLBR_LIMITS_MECHANISM forces a mechanism; anything else is LIMITS_INVALID", () => {
    expect(limitSettings({}, { KLBR_LIMITS_MECHANISM: "rlimit" }).mechanism).toBe("rlimit");
    expect(limitSettings({ mechanism: "cgroup1" }, { KLBR_LIMITS_MECHANISM: "rlimit" }).mechanism).toBe("cgroup1");
    const err = failure(() => limitSettings({}, { KLBR_LIMITS_MECHANISM: "docker" }));
    expect(err).toMatchObject({ code: "LIMITS_INVALID" });
    expect(err.message).toMatch(/auto, cgroup2, cgroup1 or rlimit, got "docker"/);
  });
});
