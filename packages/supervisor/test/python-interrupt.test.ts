import { describe, expect, it } from "vitest";
import { checkpoint, startPython } from "./helpers.js";

// Either of the first two rungs may end these cells, so only the SIGINT grace (which must not run
// out) is long; the stubborn cell below needs both short to reach the hard stop.
const graces = { interruptGraceMs: 400, sigintGraceMs: 10_000 };
const short = { interruptGraceMs: 400, sigintGraceMs: 400 };

describe("interrupting a real Python cell", () => {
  it.each([
    ["await asyncio.sleep", "import asyncio\nprint('started', flush=True)\nawait asyncio.sleep(30)"],
    ["a pure-Python loop", "print('started')\nwhile True:\n    pass"],
    ["time.sleep", "import time\nprint('started')\ntime.sleep(30)"],
    ["threading.Event().wait()", "import threading\nprint('started')\nthreading.Event().wait()"],
  ])("%s ends interrupted without a hard stop, and the namespace survives", async (_name, code) => {
    const worker = await startPython(graces);
    await worker.execute("kept = 'yes'");
    const running = worker.execute(code, { id: "busy" });
    await new Promise((r) => setTimeout(r, 150));
    const outcome = await worker.interrupt("busy");
    expect(["message", "sigint"]).toContain(outcome.rung);
    const done = await running;
    expect(done).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: outcome.rung });
    const after = await worker.execute("kept");
    expect(after).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "result", text: "'yes'" }] });
    await worker.shutdown();
  });

  it("a cell that swallows every interrupt is hard stopped; the record says so", async () => {
    const worker = await startPython(short);
    const inLoop = checkpoint();
    const running = worker.execute(`import time\nwhile True:\n    try:\n        ${inLoop.touch}\n        time.sleep(10)\n    except BaseException:\n        pass`, { id: "stubborn" });
    expect(await inLoop.reached()).toBe(true);
    const outcome = await worker.interrupt("stubborn");
    inLoop.remove(); // the loop touched it again after each swallowed interrupt, until the hard stop
    expect(outcome.rung).toBe("hard_stop");
    expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "host", rung: "hard_stop", endedBy: "hard_stop" });
    expect(worker.state).toBe("dead");
  });
});
