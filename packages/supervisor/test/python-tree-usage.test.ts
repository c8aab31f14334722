import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Worker } from "../src/index.js";
import { startPython } from "./helpers.js";

// Issue 38, item 3 (C17): without limits (no cgroup) a cell's cost is the worker's tree's, or
// null where that cannot be measured; never the worker alone reported as the tree.
const MiB = 1024 * 1024;

/** A child Python that touches `mib` MiB (every page written) and, optionally, spins `spin` s of CPU. */
const child = (mib: number, spin = 0) =>
  `import time\\nb = bytearray(${mib} << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1\\nt = time.process_time()\\nwhile time.process_time() - t < ${spin}: pass`;

describe("a worker without limits measures its cells' tree", () => {
  let worker: Worker;
  beforeAll(async () => {
    worker = await startPython();
  });
  afterAll(async () => {
    await worker.shutdown();
  });

  it("a cell whose child process touches 200 MiB: its peak is null (the tree is unknown), never the worker's ~20 MB", async () => {
    const done = await worker.execute(`import subprocess, sys\nsubprocess.run([sys.executable, '-c', "${child(200)}"], check=True)\n'ran'`);
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    // No cgroup: the child came and went, its peak is not in the worker's; the tree's is unknown.
    expect(done.usage!.peakRssBytes).toBeNull();
    expect(done.usage!.cpuMs).toEqual(expect.any(Number));
  });

  it("a cell of the worker alone is still measured: its own peak and CPU (threads are the worker's)", async () => {
    const done = await worker.execute(
      "import threading, time\ndef touch():\n    global x\n    x = bytearray(64 << 20)\n    for i in range(0, len(x), 4096): x[i] = 1\nt = threading.Thread(target=touch)\nt.start(); t.join()\nt0 = time.process_time()\nwhile time.process_time() - t0 < 0.2: pass\ndel x",
    );
    expect(done.usage!.peakRssBytes).toBeGreaterThan(64 * MiB);
    expect(done.usage!.cpuMs).toBeGreaterThanOrEqual(150);
  });

  it("a child the cell waited for counts in its CPU time", async () => {
    const done = await worker.execute(`import subprocess, sys\nsubprocess.run([sys.executable, '-c', "${child(1, 0.4)}"], check=True)`);
    expect(done.usage!.cpuMs).toBeGreaterThanOrEqual(350);
  });

  it("a child still running when the cell ends: its CPU so far counts, and the peak is not the worker's alone", async () => {
    const done = await worker.execute(
      `import subprocess, sys, time\nleft = subprocess.Popen([sys.executable, '-c', "${child(64, 0.4)}\\ntime.sleep(30)"])\nwhile True:\n    with open(f'/proc/{left.pid}/stat') as f:\n        fields = f.read().rsplit(')', 1)[1].split()\n    if int(fields[11]) + int(fields[12]) >= 40: break\n    time.sleep(0.02)`,
    );
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    const { cpuMs, peakRssBytes } = done.usage!;
    expect(cpuMs).toBeGreaterThanOrEqual(350);
    expect(peakRssBytes).toBeNull();
    // The next cell runs with that child still in the tree: its peak cannot be the worker's alone either.
    const next = await worker.execute("left.poll() is None");
    expect(next).toMatchObject({ output: [{ text: "True" }] });
    expect(next.usage!.peakRssBytes).toBeNull();
    // Nor the generation's: its tree was more than the worker.
    expect(worker.usage()).toMatchObject({ cpuMs: expect.any(Number), peakRssBytes: null });
    await worker.execute("left.kill(); left.wait()");
  });

  it("an orphan (a grandchild the guard reaps) that spins during the cell counts in its CPU time", async () => {
    // The cell's child forks a grandchild and exits: the grandchild spins as an orphan of the
    // worker, reparented to the guard (the tree's subreaper), which reaps it before the cell ends.
    const done = await worker.execute(
      "import os, time\npid = os.fork()\nif pid == 0:\n    if os.fork() == 0:\n        t = time.process_time()\n        while time.process_time() - t < 0.4: pass\n    os._exit(0)\nos.waitpid(pid, 0)\ntime.sleep(1.5)",
    );
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    expect(done.usage!.cpuMs).toBeGreaterThanOrEqual(350);
    expect(done.usage!.peakRssBytes).toBeNull();
  });
});

describe("a generation whose tree was the worker alone", () => {
  it("keeps the worker's peak as the generation's, and the tree's CPU", async () => {
    const worker = await startPython();
    try {
      const done = await worker.execute("x = bytearray(48 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ndel x");
      expect(done.usage!.peakRssBytes).toBeGreaterThan(48 * MiB);
      const totals = worker.usage();
      expect(totals.peakRssBytes).toBeGreaterThan(48 * MiB);
      expect(totals.cpuMs).toBeGreaterThan(0);
    } finally {
      await worker.shutdown();
    }
  });
});
