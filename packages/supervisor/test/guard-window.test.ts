// The guard's start-up windows (issue 26, item 1): a stop that lands between the fork and the
// guard being ready to kill, and a guard that dies itself, must never leave the command running.
import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GUARD_SCRIPT, guardArgv, readGuardStatus } from "../src/guard.js";
import { resolvePython } from "../src/python.js";
import { waitFor } from "./helpers.js";

/** Live processes whose command line holds `mark`. */
function marked(mark: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      if (!readFileSync(`/proc/${p}/cmdline`, "latin1").includes(mark)) continue;
      const stat = readFileSync(`/proc/${p}/stat`, "latin1");
      if (!/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

const sleeper = (mark: string) => [resolvePython(), "-c", "import time; time.sleep(300)", mark];

describe("the guard's windows (issue 26, item 1)", () => {
  it("a SIGKILLed guard takes its command with it (PR_SET_PDEATHSIG in the child)", async () => {
    const mark = `klbr-gw-${randomBytes(6).toString("hex")}`;
    const [file, ...args] = guardArgv(sleeper(mark));
    const guard = spawn(file, args, { stdio: ["ignore", "ignore", "ignore", "pipe"] });
    try {
      const status = await readGuardStatus(guard.stdio[3] as Readable);
      expect(status).toMatchObject({ pid: expect.any(Number) });
      guard.kill("SIGKILL");
      expect(await waitFor(() => marked(mark).length === 0, 10_000)).toBe(true);
    } finally {
      killAll(marked(mark));
    }
  });

  it("a stop signal that lands right after the fork, before the guard waits, still kills the command", async () => {
    const mark = `klbr-gw-${randomBytes(6).toString("hex")}`;
    // The guard's own main(), with fork() patched to signal the guard the moment the child exists:
    // the deterministic form of a host that dies (PR_SET_PDEATHSIG) while the guard starts the command.
    const driver = [
      "import importlib.util, os, signal, sys",
      `spec = importlib.util.spec_from_file_location('klbr_guard', ${JSON.stringify(GUARD_SCRIPT)})`,
      "guard = importlib.util.module_from_spec(spec)",
      "spec.loader.exec_module(guard)",
      "real_fork = os.fork",
      "def fork():",
      "    pid = real_fork()",
      "    if pid: os.kill(os.getpid(), signal.SIGTERM)",
      "    return pid",
      "os.fork = fork",
      "sys.exit(guard.main(sys.argv[1:]))",
    ].join("\n");
    const child = spawn(resolvePython(), ["-I", "-c", driver, "--", ...sleeper(mark)], { stdio: "ignore" });
    try {
      await new Promise((resolve) => child.once("exit", resolve));
      expect(await waitFor(() => marked(mark).length === 0, 10_000)).toBe(true);
    } finally {
      killAll(marked(mark));
    }
  });
});
