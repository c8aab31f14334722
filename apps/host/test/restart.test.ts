import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";
import { headerChain } from "../src/store/headers";
import { NO_FENCE } from "../src/store/api";
import { openHostLog } from "../src/store/host-log";
import type { HostOptions } from "../src/runtime/host-options";
import { SkillsService } from "../src/runtime/skills-service";
import { resultOf, startHostOnTestStore, tempDir, testLogOptions } from "./helpers";

const dataDir = tempDir();
const workspace = tempDir("klbr-w-");
/** A host on the data directory, on the test store (SQLite, or its PostgreSQL database under KLBR_TEST_STORE=postgres). */
const start = (options: Partial<HostOptions> = {}) => startHostOnTestStore({ dataDir, workspace, ...options });
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe("a host started again on the same data directory", () => {
  test("recovers: a cell left running is interrupted from the host's observation, an overdue wait is woken", async () => {
    const first = await start();
    expect(resultOf(await first.execute("kept = 41\nkept + 1"))).toBe("42");
    await first.stop();

    // What a crash leaves behind: a running execution and an open wait past its deadline, written to the log as the host's Store writes them.
    const log = openHostLog({ sqliteFile: join(dataDir, "klbr.sqlite"), ...(await testLogOptions(dataDir)), fence: NO_FENCE });
    try {
      await log.ready();
      await log.store.startExecution({ id: "ex-crashed", sessionId: "root", generation: "g-1", code: "import time; time.sleep(99)", startedAtMs: 1_000 });
      await log.store.createWait({ id: "wait-overdue", sessionId: "root", executionId: "ex-crashed", reason: "r", seconds: 1, nowMs: 1_000 });
    } finally {
      await log.close();
    }

    const second = await start();
    try {
      expect(await second.store.getExecution("ex-crashed")).toMatchObject({ status: "interrupted", endedBy: "host_restart" });
      expect(await second.store.getWait("wait-overdue")).toMatchObject({ state: "woken", wokenBy: "deadline" });
      // The namespace did not survive (a new generation), the log did.
      const r = await second.execute("'kept' in dir()");
      expect(resultOf(r)).toBe("False");
      expect(r.generation).toBe("g-2");
    } finally {
      await second.stop();
    }
  });

  test("a skill written between generations is offered then, recorded as a host header revision", async () => {
    const skill = join(dataDir, "skills", "release_notes");
    mkdirSync(skill, { recursive: true });
    writeFileSync(join(skill, "SKILL.md"), "# release_notes\n\nWrite them from the log.\n");
    const host = await start();
    try {
      const chain = headerChain(host.db, "root") as Array<{ type: string; actor?: { origin: string } }>;
      expect(chain[0]!.type).toBe("header_pin");
      expect(chain.at(-1)).toMatchObject({ type: "header_revision", actor: { origin: "host" } });
      const r = await host.execute("import klbr.skills.release_notes as s\n(s.__doc__.splitlines()[0], 'release_notes' in (await runtime.instructions())['text'])");
      expect(resultOf(r)).toBe("('# release_notes', True)");
    } finally {
      await host.stop();
    }
  });

  test("a second host on a data directory in use is refused before it recovers anything", async () => {
    const first = await start();
    try {
      const gate = join(workspace, "go");
      const running = first.execute(`import os, asyncio\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    await asyncio.sleep(0.01)\n'done'`);
      while ((await first.store.runningExecutions()).length === 0) await new Promise((r) => setTimeout(r, 10));
      await expect(start()).rejects.toMatchObject({ code: "HOST_ALREADY_RUNNING" });
      // Crash recovery would have closed the live cell as interrupted: it is still running.
      expect(await first.store.runningExecutions()).toHaveLength(1);
      writeFileSync(gate, "");
      expect(await running).toMatchObject({ status: "ok", output: [{ stream: "result", text: "'done'" }] });
    } finally {
      await first.stop();
    }
    // Stopped, the directory is free again.
    await (await start()).stop();
  });

  test("a wait deadline scheduled while the host stops sets no timer on the closed log", async () => {
    const host = await start();
    await host.stop();
    host.wakes.scheduleWaitDeadline("wait-after-stop", 0);
    // A timer due at once fires before this one; had it been set, it would throw on the closed database.
    await new Promise((r) => setTimeout(r, 20));
  });

  test("a start indexes the skill roots once (the root workbench's generation does it)", async () => {
    const reindex = vi.spyOn(SkillsService.prototype, "reindex");
    try {
      const host = await start();
      await host.stop();
      expect(reindex).toHaveBeenCalledTimes(1);
    } finally {
      reindex.mockRestore();
    }
  });

  test("a workbench starting while the host stops is refused or shut down, never left running", async () => {
    const host = await start();
    // Settled into a value at once: the rejection may come before stop() returns.
    const late = host.execute("1", "late").then(
      () => null,
      (error: unknown) => error,
    );
    await host.stop();
    expect(await late).toMatchObject({ code: "HOST_STOPPING" });
    expect(workerChildren()).toEqual([]);
  });
});

/** Worker processes this test process started that are still alive. */
function workerChildren(): number[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("klbr.worker");
      } catch {
        return false;
      }
    })
    .map(Number);
}
