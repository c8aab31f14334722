import { describe, expect, it } from "vitest";
import type { CellCompletion } from "../src/index.js";
import { checkpoint, startPython } from "./helpers.js";

// Issue 38, item 1: a cell that blocks SIGINT and sleeps in C. The message rung's kick (the
// doorbell, then SIGINT, which stays pending) cuts the C call short; what the cell's own code does
// next decides the record. A rung ended it (interrupted, later lines never ran, ended_by that
// rung) or it finished on its own (ended_by worker): never `ok` ended by a rung.
const graces = { interruptGraceMs: 300, sigintGraceMs: 700 };
const RUNGS = ["message", "sigint", "hard_stop"];

const PRELUDE = "import ctypes, signal, threading\nlib = ctypes.CDLL(None)\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n";

async function interrupted(body: string): Promise<{ rung: string; completion: CellCompletion }> {
  const worker = await startPython(graces);
  try {
    const inCell = checkpoint();
    const running = worker.execute(`${PRELUDE}${inCell.touch}\n${body}`, { id: "blocked" });
    expect(await inCell.reached()).toBe(true);
    inCell.remove();
    const outcome = await worker.interrupt("blocked");
    const completion = await running;
    expect(outcome.completion).toMatchObject({ id: "blocked", kind: completion.kind, endedBy: completion.endedBy });
    // The invariant, whichever way the cell went.
    const c = completion as CellCompletion & { status?: string; output?: Array<{ text: string }> };
    const after = (c.output ?? []).some((o) => o.text.includes("after"));
    if (c.status === "interrupted") {
      expect(RUNGS).toContain(c.endedBy);
      expect(after).toBe(false);
    } else {
      expect(RUNGS).not.toContain(c.endedBy);
    }
    return { rung: outcome.rung, completion };
  } finally {
    await worker.hardStop("test_done");
  }
}

describe("interrupting a cell that blocks SIGINT and sleeps in C", () => {
  it("the kick cuts the sleep short and the cell's next lines run: it finished on its own", async () => {
    const { rung, completion } = await interrupted("left = lib.sleep(20)\nprint('after', left > 0)");
    expect(completion).toMatchObject({ kind: "cell", status: "ok", endedBy: "worker", output: [{ stream: "stdout", text: "after True\n" }] });
    expect(rung).toBe("completed");
  });

  it("a cell that resumes the cut sleep is still running: the ladder goes on to the hard stop", async () => {
    const { rung, completion } = await interrupted("left = 20\nwhile left:\n    left = lib.sleep(left)\nprint('after')");
    expect(rung).toBe("hard_stop");
    expect(completion).toMatchObject({ status: "interrupted", endedBy: "hard_stop", source: "host" });
  });

  it("Python code after the cut sleep is ended by the SIGINT rung (another thread takes the host's signal)", async () => {
    const { rung, completion } = await interrupted("lib.sleep(20)\nwhile True:\n    pass\nprint('after')");
    expect(rung).toBe("sigint");
    expect(completion).toMatchObject({ status: "interrupted", endedBy: "sigint", source: "worker" });
  });

  it("joining a thread that sleeps in C (both with SIGINT blocked) ends at the hard stop", async () => {
    const { rung, completion } = await interrupted("t = threading.Thread(target=lambda: lib.sleep(20))\nt.start()\nt.join()\nprint('after')");
    expect(rung).toBe("hard_stop");
    expect(completion).toMatchObject({ status: "interrupted", endedBy: "hard_stop" });
  });

  it("joining it with SIGINT unblocked again in the cell's thread: the message rung ends the join", async () => {
    const { rung, completion } = await interrupted(
      "t = threading.Thread(target=lambda: lib.sleep(20), daemon=True)\nt.start()\nsignal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])\nt.join()\nprint('after')",
    );
    expect(rung).toBe("message");
    expect(completion).toMatchObject({ status: "interrupted", endedBy: "message", source: "worker" });
  });
});
