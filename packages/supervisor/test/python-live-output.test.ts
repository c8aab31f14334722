// C16 live output through the supervisor: the real Python worker started with liveOutput, and a
// fake worker that breaks each rule (each one invalidates the generation).
import { writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CellCompletion, CellOutput, Worker } from "../src/index.js";
import { startFake, startPython } from "./helpers.js";

function outputs(): { list: CellOutput[]; listener: (o: CellOutput) => void; text: () => string } {
  const list: CellOutput[] = [];
  return { list, listener: (o) => list.push(o), text: () => list.map((o) => o.text).join("") };
}

/** Resolves with the outputs seen once `predicate` holds for them. */
function until(list: CellOutput[], predicate: (list: CellOutput[]) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (predicate(list) ? resolve() : setTimeout(check, 5));
    check();
  });
}

describe("live output from the real Python worker", () => {
  let worker: Worker;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "klbr-live-"));
    worker = await startPython({ liveOutput: true });
  });
  afterAll(async () => {
    await worker?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("streams a line while the cell is still blocked, then completes with the unchanged record", async () => {
    const gate = join(dir, "go");
    const seen = outputs();
    const done = worker.execute(`import os, time\nprint('line 1')\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.005)\nprint('line 2')`, { onOutput: seen.listener });
    await until(seen.list, (list) => list.length > 0);
    expect(seen.list[0]).toEqual({ id: expect.any(String), seq: 0, stream: "stdout", text: "line 1\n", dropped_bytes: 0 });
    writeFileSync(gate, "");
    const completion = await done;
    expect(completion).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "stdout", text: "line 1\nline 2\n" }] });
    expect(seen.text()).toBe("line 1\nline 2\n");
    expect(seen.list.map((o) => o.seq)).toEqual(seen.list.map((_, i) => i));
  });

  it("a cell that prints nothing sends nothing, and a cell without a listener still runs", async () => {
    const seen = outputs();
    await worker.execute("1+1", { onOutput: seen.listener });
    expect(seen.list).toEqual([]);
    const quiet: CellCompletion = await worker.execute("print('unheard')");
    expect(quiet).toMatchObject({ kind: "cell", status: "ok" });
    expect(worker.state).toBe("ready");
  });

  it("an interrupt mid-stream ends the cell, with all of its output before the completion", async () => {
    const seen = outputs();
    let completedAt = -1;
    const done = worker.execute("import itertools\nfor i in itertools.count():\n    print(i)", { onOutput: seen.listener });
    void done.then(() => (completedAt = seen.list.length));
    await until(seen.list, (list) => list.length > 0);
    const id = seen.list[0]!.id;
    await worker.interrupt(id);
    const completion = await done;
    expect(completion).toMatchObject({ kind: "cell", status: "interrupted" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(completedAt).toBe(seen.list.length); // nothing arrived after the completion
    expect(seen.text().startsWith("0\n1\n")).toBe(true);
    expect(worker.state).toBe("ready");
  });

  it("a big print is paced and its drops counted, and the worker stays valid", async () => {
    const seen = outputs();
    const started = performance.now();
    const done = await worker.execute("chunk = 'y' * (1 << 20)\nfor _ in range(50):\n    print(chunk)\ndel chunk", { onOutput: seen.listener });
    const elapsed = (performance.now() - started) / 1000;
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    const sent = seen.list.reduce((n, o) => n + Buffer.byteLength(o.text), 0);
    const dropped = seen.list.reduce((n, o) => n + o.dropped_bytes, 0);
    expect(sent + dropped).toBe(50 * ((1 << 20) + 1));
    expect(seen.list.length).toBeLessThanOrEqual(20 * elapsed + 1);
  });
});

describe("a hard stop mid-stream", () => {
  it("fails the cell from the host's observation and delivers nothing after it", async () => {
    const worker = await startPython({ liveOutput: true });
    const seen = outputs();
    const done = worker.execute("import itertools\nfor i in itertools.count():\n    print(i)", { onOutput: seen.listener });
    await until(seen.list, (list) => list.length > 0);
    await worker.hardStop("test_hard_stop");
    const completion = await done;
    expect(completion).toMatchObject({ kind: "cell", source: "host" }); // the host's own record: no worker completion
    const count = seen.list.length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen.list.length).toBe(count);
    expect(worker.state).toBe("dead");
  });
});

describe("live output that breaks C16 invalidates the generation", () => {
  it("a hooks worker never negotiates it: an output from one is a violation", async () => {
    const worker = await startFake("live-output", { role: "hooks", liveOutput: true });
    const done = await worker.invoke("delivery.review", { effect_id: "e-1", destination: "operator", text: "hi" });
    expect(done).toMatchObject({ kind: "failed" });
    expect((await worker.exited).reason).toBe("protocol_violation");
  });

  it("a well-formed stream is delivered in order", async () => {
    const worker = await startFake("live-output", { liveOutput: true });
    const seen = outputs();
    const done = await worker.execute("go", { onOutput: seen.listener });
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    expect(seen.list.map((o) => [o.seq, o.stream, o.text, o.dropped_bytes])).toEqual([
      [0, "stdout", "line 0\n", 0],
      [1, "stderr", "line 1\n", 1],
    ]);
    await worker.shutdown();
  });

  it.each([
    ["good", false, "protocol_violation"],
    ["out-of-order", true, "protocol_violation"],
    ["unknown-operation", true, "protocol_violation"],
    ["after-completed", true, "protocol_violation"],
    ["too-long", true, "envelope_error:ENVELOPE_LIMIT_EXCEEDED"],
  ])("FAKE_OUTPUT=%s (liveOutput %s) ends the worker with %s", async (mode, liveOutput, reason) => {
    const worker = await startFake("live-output", { liveOutput, env: { FAKE_OUTPUT: mode } });
    const done = await worker.execute("go");
    const exit = await worker.exited;
    expect(exit.reason).toBe(reason);
    expect(worker.state).toBe("dead");
    if (mode !== "after-completed") expect(done).toMatchObject({ kind: "failed", source: "host", reason, endedBy: "invalidated" });
    else expect(done).toMatchObject({ kind: "cell", status: "ok" }); // completed first; the late output ends the generation
  });
});
