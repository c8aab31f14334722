import { describe, expect, it } from "vitest";
import { isSupervisorError, startSpare, type SpareWorker } from "../src/index.js";
import { descendants, isAlive } from "../src/tree.js";
import { PYTHON_DIR } from "./helpers.js";

// A warm spare (C19): the real Python worker, started without a session, taken later.
const spareOf = () => startSpare({ pythonPath: [PYTHON_DIR], handshakeTimeoutMs: 10_000 });

async function errorOf(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (error) {
    return { code: isSupervisorError(error) ? error.code : undefined, message: (error as Error).message };
  }
  throw new Error("expected a rejection");
}

describe("startSpare", () => {
  it("waits connected and silent, then bound becomes that session's worker and runs cells", async () => {
    const spare = await spareOf();
    expect(spare.available).toBe(true);
    expect(isAlive(spare.pid)).toBe(true);
    const worker = await spare.bind("s-taken", "g-7");
    expect(spare.available).toBe(false);
    expect(worker.sessionId).toBe("s-taken");
    expect(worker.generation).toBe("g-7");
    expect(worker.hello.role).toBe("workbench");
    const done = await worker.execute("x = 6 * 7\nx");
    expect(done).toMatchObject({ status: "ok", output: [{ stream: "result", text: "42" }] });
    // The cell's stdin is not the pipe the identity came on.
    expect(await worker.execute("import os; os.read(0, 5)")).toMatchObject({ output: [{ stream: "result", text: "b''" }] });
    await worker.shutdown();
    expect((await worker.exited).code).toBe(0);
  });

  it("is taken once: a second bind is refused, and an unbound discard leaves no process", async () => {
    const spare = await spareOf();
    const pid = spare.pid;
    const worker = await spare.bind("s-1", "g-1");
    expect(await errorOf(spare.bind("s-2", "g-1"))).toMatchObject({ code: "WORKER_INVALID_ARGUMENT", message: expect.stringMatching(/already taken/) });
    await worker.shutdown();

    const other = await spareOf();
    const tree = [other.pid, ...descendants(other.pid).map((p) => p.pid)];
    await other.discard();
    await other.exited;
    expect(other.available).toBe(false);
    for (const p of tree) expect(isAlive(p)).toBe(false);
    expect(pid).toBeGreaterThan(0);
  });

  it("refuses an identity that is not an identifier before writing anything, and a dead spare", async () => {
    const spare: SpareWorker = await spareOf();
    expect(await errorOf(spare.bind("s 1", "g-1"))).toMatchObject({ code: "WORKER_INVALID_ARGUMENT" });
    expect(spare.available).toBe(true);
    process.kill(spare.pid, "SIGKILL");
    await spare.exited;
    expect(spare.available).toBe(false);
    expect(await errorOf(spare.bind("s-1", "g-1"))).toMatchObject({ code: "WORKER_DEAD" });
  });
});
