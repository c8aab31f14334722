import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startPython } from "./helpers.js";

/** time.sleep twice as often: a kick that lands just before a blocking call is the one a signal can lose. */
const CELLS = ["import time\ntime.sleep(30)", "while True:\n    pass", "import time\ntime.sleep(30)", "import asyncio\nawait asyncio.sleep(30)"];

/** Block this thread for `ms` (the execute frame is already written: the worker is starting the cell). */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the interrupt must leave at this offset from the execute, not at the next timer tick
  }
}

describe("an interrupt sent right after the execute (issue 10, item 18)", () => {
  it.each([
    ["a pure-Python loop", "while True:\n    pass"],
    ["time.sleep", "import time\ntime.sleep(30)"],
    ["await asyncio.sleep", "import asyncio\nawait asyncio.sleep(30)"],
  ])("%s: the message rung ends it, 10 times in 10", async (_name, code) => {
    // A SIGINT grace longer than the test: only the message rung can end the cell in time.
    const worker = await startPython({ interruptGraceMs: 3000, sigintGraceMs: 60_000 });
    try {
      for (let round = 0; round < 10; round++) {
        const id = `early-${round}`;
        const running = worker.execute(code, { id });
        const outcome = await worker.interrupt(id);
        expect(outcome.rung, `round ${round}`).toBe("message");
        expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: "message" });
      }
      expect(await worker.execute("1 + 1")).toMatchObject({ status: "ok", output: [{ stream: "result", text: "2" }] });
    } finally {
      await worker.shutdown();
    }
  });

  it("sent 0 to 5 ms after the execute, with two busy processes on the machine: the message rung ends it in every round (issue 19, item 12)", async () => {
    // The interrupt lands anywhere from before the execute is read to well inside the cell's code,
    // where a kick can arrive just before the cell blocks in a system call. Only the message rung
    // may end a round: the SIGINT rung would come 3 s later, after the round failed.
    const load = [0, 1].map(() => spawn("yes", [], { stdio: "ignore" }));
    const worker = await startPython({ interruptGraceMs: 3000, sigintGraceMs: 60_000 });
    try {
      for (let round = 0; round < 204; round++) {
        const offsetMs = (round % 51) / 10;
        const id = `offset-${round}`;
        const running = worker.execute(CELLS[round % CELLS.length]!, { id });
        spin(offsetMs);
        const outcome = await worker.interrupt(id);
        expect(outcome.rung, `round ${round}, interrupt ${offsetMs} ms after the execute`).toBe("message");
        expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: "message" });
      }
    } finally {
      for (const child of load) child.kill("SIGKILL");
      await worker.shutdown();
    }
  }, 120_000);
});
