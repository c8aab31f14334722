import { describe, expect, it } from "vitest";
import { checkpoint, startFake, startPython } from "./helpers.js";

describe("a worker the ladder's SIGINT kills (issue 10, item 20)", () => {
  it("the record says rung sigint, not invalidated", async () => {
    const worker = await startFake("sigint-dies", { interruptGraceMs: 200, sigintGraceMs: 10_000 });
    const running = worker.execute("anything", { id: "deaf" });
    const outcome = await worker.interrupt("deaf");
    expect(outcome.rung).toBe("sigint");
    expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "host", rung: "sigint", endedBy: "sigint", exit: { signal: "SIGINT" } });
    expect((await worker.exited).signal).toBe("SIGINT");
  });

  it("a Python cell that restored SIGINT's default and blocks the message rung's kick: rung sigint", async () => {
    const worker = await startPython({ interruptGraceMs: 300, sigintGraceMs: 10_000 });
    const blocked = checkpoint();
    const code = `import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n${blocked.touch}\nwhile True:\n    time.sleep(0.01)`;
    const running = worker.execute(code, { id: "dfl" });
    expect(await blocked.reached()).toBe(true);
    blocked.remove();
    const outcome = await worker.interrupt("dfl");
    expect(outcome.rung).toBe("sigint");
    expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "host", endedBy: "sigint", exit: { signal: "SIGINT" } });
  });

  it("a worker that dies of another signal while the ladder runs is still invalidated", async () => {
    const worker = await startFake("sigint-dies", { interruptGraceMs: 10_000 });
    const running = worker.execute("anything", { id: "deaf" });
    const ladder = worker.interrupt("deaf");
    await new Promise((r) => setTimeout(r, 100));
    process.kill(worker.pid, "SIGKILL");
    expect(await running).toMatchObject({ kind: "failed", source: "host", endedBy: "invalidated", exit: { signal: "SIGKILL" } });
    expect((await ladder).rung).toBe("message");
  });
});
