import { afterAll, beforeAll, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { getExecution } from "../src/store/executions";
import { startTestHost } from "./helpers";

// Issue 38, item 3 (C17): without limits the execution row's cost is the worker's tree's, or
// null where that cannot be measured; never the worker alone recorded as the tree.
const MiB = 1024 * 1024;
let host: Host;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, close } = await startTestHost());
});
afterAll(async () => {
  await close();
});

test("a cell whose child process touches 200 MiB records no worker-only peak; its CPU counts the child", async () => {
  const child = "import time\\nb = bytearray(200 << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1\\nt = time.process_time()\\nwhile time.process_time() - t < 0.3: pass";
  const report = await host.execute(`import subprocess, sys\nsubprocess.run([sys.executable, '-c', "${child}"], check=True)\n'ran'`);
  expect(report.status).toBe("ok");
  const row = getExecution(host.db, report.id)!;
  expect(row.peakRssBytes).toBeNull();
  expect(row.cpuMs).toBeGreaterThanOrEqual(250);
});

test("a cell of the worker alone keeps its measured peak", async () => {
  const report = await host.execute("x = bytearray(64 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\ndel x");
  expect(getExecution(host.db, report.id)!.peakRssBytes).toBeGreaterThan(64 * MiB);
});
