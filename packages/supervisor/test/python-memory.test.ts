import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startPython } from "./helpers.js";

const MiB = 1024 * 1024;

function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

describe("200 MiB of output", () => {
  it("printed by a cell: both sides stay bounded and the excess is counted", async () => {
    const worker = await startPython();
    await worker.execute("chunk = 'x' * (64 * 1024 - 1)");
    const workerBefore = peakRss(worker.pid);
    const hostBefore = process.memoryUsage().rss;
    const done = await worker.execute("for _ in range(3200):\n    print(chunk)");
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    if (done.kind !== "cell" || done.source !== "worker") throw new Error("unexpected");
    const kept = done.output.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
    expect(kept + done.truncated_bytes).toBe(200 * MiB);
    expect(peakRss(worker.pid) - workerBefore).toBeLessThan(64 * MiB);
    expect(process.memoryUsage().rss - hostBefore).toBeLessThan(64 * MiB);
    await worker.shutdown();
  });

  it("written to the raw stdout fd: drained into the 8 KiB tail without blocking the worker", async () => {
    const worker = await startPython();
    const hostBefore = process.memoryUsage().rss;
    const done = await worker.execute("import os\nb = b'y' * (1 << 20)\nfor _ in range(200):\n    os.write(1, b)\n'written'");
    expect(done).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "result", text: "'written'" }] });
    expect(worker.stdoutTail).toBe("y".repeat(8192));
    expect(process.memoryUsage().rss - hostBefore).toBeLessThan(64 * MiB);
    await worker.shutdown();
  });
});
