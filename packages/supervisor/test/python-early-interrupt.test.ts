import { describe, expect, it } from "vitest";
import { startPython } from "./helpers.js";

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
});
