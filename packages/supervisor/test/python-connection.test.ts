import { describe, expect, it } from "vitest";
import { isAlive } from "../src/tree.js";
import { startPython, waitFor } from "./helpers.js";

const SOCKETS = [
  "import os",
  "def sockets():",
  "    for fd in os.listdir('/proc/self/fd'):",
  "        try:",
  "            if os.readlink('/proc/self/fd/' + fd).startswith('socket:'): yield int(fd)",
  "        except OSError: pass",
].join("\n");

describe("the worker's connection belongs to the worker (issue 10, item 19)", () => {
  it("a cell that closes the socket's fd: the worker exits, the cell fails instead of hanging", async () => {
    const worker = await startPython();
    const done = await worker.execute(`${SOCKETS}\nfor fd in list(sockets()):\n    os.close(fd)\n'closed'`);
    expect(done).toMatchObject({ kind: "failed", source: "host", reason: "worker_exited" });
    const exit = await worker.exited;
    expect(exit.code).toBe(2);
  });

  it("a cell that forks and lets the child run on: one completion, from the worker only", async () => {
    const worker = await startPython();
    try {
      const done = await worker.execute("import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(0.3)\n('parent', pid) if pid else ('child', os.getpid())");
      expect(done).toMatchObject({ kind: "cell", status: "ok", source: "worker" });
      const text = done.kind === "cell" ? done.output[0]!.text : "";
      expect(text).toMatch(/^\('parent', \d+\)$/);
      const child = Number(/(\d+)/.exec(text)![1]);
      // The child finishes the cell too, 0.3 s later: it must leave quietly, sending nothing.
      expect(await waitFor(() => !isAlive(child), 5000)).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
      expect(worker.state).toBe("ready");
      expect(await worker.execute("1 + 1")).toMatchObject({ status: "ok", output: [{ stream: "result", text: "2" }] });
    } finally {
      await worker.shutdown();
    }
  });
});
