import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

let host: Host;
let workspace: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, workspace, close } = await startTestHost({ interruptGraceMs: 300, sigintGraceMs: 10_000 }));
});

afterAll(async () => {
  await close();
});

test("when the ladder's SIGINT kills the worker, the durable record says rung sigint (issue 10, item 20)", async () => {
  // SIGINT's default action restored and blocked in the cell's thread: the message rung's kick
  // stays pending, the host's SIGINT (rung 2) reaches another thread and ends the process.
  const running = host.execute(
    "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\nopen('started', 'w').close()\nwhile True:\n    time.sleep(0.01)",
  );
  while (!existsSync(join(workspace, "started"))) await new Promise((r) => setTimeout(r, 20));
  const outcome = await host.interrupt({});
  expect(outcome).toMatchObject({ rung: "sigint" });
  const report = await running;
  expect(report).toMatchObject({ status: "interrupted", ended_by: "sigint" });
  // The generation is gone (the namespace with it); the next cell runs in a new one.
  expect((await host.execute("1 + 1")).status).toBe("ok");
});
