// Issue 26, item 1: kill -9 of the daemon with a workspace.run command in flight, at random
// offsets (during the guard's and the command's start too), never leaves a process behind.
// KLBR_KILL9_ROUNDS sets the count (CI runs a few; 200 ran green before this was merged).
import { appendFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { tempDir } from "./helpers";
import { exec, killMarked, marked, marker, startDaemon, until } from "./sandbox-support";

const ROUNDS = Number(process.env.KLBR_KILL9_ROUNDS ?? 5);
const dataDir = tempDir("klbr-k9d-");
const workspace = tempDir("klbr-k9w-");
const marks: string[] = [];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** KLBR_LOOP_LOG=FILE: one line per round, for long local runs. */
const note = (line: string) => process.env.KLBR_LOOP_LOG && appendFileSync(process.env.KLBR_LOOP_LOG, `${line}\n`);

afterAll(() => {
  for (const mark of marks) killMarked(mark);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

function describePids(pids: number[]): string[] {
  return pids.map((pid) => {
    try {
      return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ")}`;
    } catch {
      return `${pid}: gone`;
    }
  });
}

describe("kill -9 of the daemon with a workspace.run in flight (issue 26, item 1)", () => {
  test(`${ROUNDS} rounds at random offsets: the command and its guard always die with the daemon`, async () => {
    const survivors: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const daemon = await startDaemon(dataDir, workspace, [], process.env);
      const mark = marker(`k9-${round}`);
      marks.push(mark);
      const started = join(workspace, `${mark}.started`);
      const cell = `open(${JSON.stringify(started)}, 'w').close()\nawait runtime.run([sys.executable, '-c', 'import time; time.sleep(300)', ${JSON.stringify(mark)}])`;
      void exec(daemon.client, `import sys\n${cell}`).catch(() => undefined);
      expect(await until(() => existsSync(started), 30_000)).toBe(true);
      // Even rounds: anywhere in the request's start (the guard's spawn, its fork and exec, the
      // command's own start). Odd rounds: once the command runs, shortly after.
      let offset: number;
      if (round % 2 === 0) {
        offset = Math.random() * 250;
      } else {
        expect(await until(() => marked(mark).length >= 2, 30_000)).toBe(true);
        offset = Math.random() * 20;
      }
      await pause(offset);
      const exited = new Promise((resolve) => daemon.child.once("exit", resolve));
      daemon.child.kill("SIGKILL");
      await exited;
      daemon.client.close();
      const clean = await until(() => marked(mark).length === 0, 10_000);
      note(`round ${round} offset ${offset.toFixed(1)} ms ${clean ? "clean" : "SURVIVORS"}`);
      if (!clean) {
        survivors.push(`round ${round} (offset ${offset.toFixed(1)} ms): ${describePids(marked(mark)).join("; ")}`);
        killMarked(mark);
      }
    }
    expect(survivors).toEqual([]);
  }, 60_000 + ROUNDS * 30_000);
});
