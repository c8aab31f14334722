import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public surface", () => {
  it("exports exactly these runtime names", () => {
    expect(Object.keys(api).sort()).toEqual([
      "DEFAULTS",
      "DISPLAY_FLAG",
      "GUARD_ENV_FD",
      "GUARD_SCRIPT",
      "GUARD_STATUS_FD",
      "LIMIT_MINIMUMS",
      "LIMIT_NAMES",
      "LIVE_OUTPUT_FLAG",
      "LimitsSyntaxError",
      "LimitsUnavailableError",
      "MAX_SOCKET_PATH_BYTES",
      "MECHANISM_LABELS",
      "MINIMAL_ENV_NAMES",
      "SupervisorError",
      "TAIL_BYTES",
      "cpuVerdict",
      "descendants",
      "formatLimits",
      "formatValue",
      "guardArgv",
      "guardLaunch",
      "hasLimits",
      "isSupervisorError",
      "killTagged",
      "killTree",
      "launcherEnv",
      "limitVerdict",
      "markGroup",
      "minimalEnv",
      "parseLimits",
      "prepareLimits",
      "readGuardStatus",
      "recordRoot",
      "resolvePython",
      "rlimitsFor",
      "sendCommandEnv",
      "startSpare",
      "startWorker",
      "sweepPrivateDirs",
      "treeTag",
      "watchCpu",
      "watchGuard",
      "withGuardLimits",
    ]);
  });

  it("SupervisorError says whether a restart may help", () => {
    expect(new api.SupervisorError("WORKER_DEAD", "x").retryable).toBe(true);
    expect(new api.SupervisorError("WORKER_BAD_TOKEN", "x").retryable).toBe(false);
    expect(api.isSupervisorError(new api.SupervisorError("WORKER_BUSY", "x"))).toBe(true);
    expect(api.isSupervisorError(new Error("x"))).toBe(false);
  });

  it("resolvePython honours KLBR_PYTHON, else resolves a real interpreter path once", () => {
    const saved = process.env.KLBR_PYTHON;
    try {
      process.env.KLBR_PYTHON = "/opt/py/bin/python3.11";
      expect(api.resolvePython()).toBe("/opt/py/bin/python3.11");
      delete process.env.KLBR_PYTHON;
      const first = api.resolvePython();
      expect(first).toMatch(/python/);
      expect(api.resolvePython()).toBe(first);
    } finally {
      if (saved === undefined) delete process.env.KLBR_PYTHON;
      else process.env.KLBR_PYTHON = saved;
    }
  });
});
