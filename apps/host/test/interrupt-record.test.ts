import { existsSync, rmSync } from "node:fs";
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

/** Run `code` (which touches `started` once it sits where it should), interrupt it there. */
async function interruptOnceStarted(code: string): Promise<{ outcome: unknown; report: Awaited<ReturnType<Host["execute"]>> }> {
  rmSync(join(workspace, "started"), { force: true });
  const running = host.execute(code);
  while (!existsSync(join(workspace, "started"))) await new Promise((r) => setTimeout(r, 20));
  const outcome = await host.interrupt({});
  return { outcome, report: await running };
}

const BLOCKED = "import ctypes, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\nopen('started', 'w').close()\n";

test("a cell that blocks SIGINT, whose C sleep the kick cuts short, finished on its own: never ok ended by a rung (issue 38, item 1)", async () => {
  const { outcome, report } = await interruptOnceStarted(`${BLOCKED}left = ctypes.CDLL(None).sleep(20)\nprint('after', left > 0)`);
  expect(report).toMatchObject({ status: "ok", ended_by: "worker", output: [{ stream: "stdout", text: "after True\n" }] });
  expect(outcome).toMatchObject({ rung: "completed", execution_id: report.id });
  expect((await host.execute("1 + 1")).status).toBe("ok");
});

test("a blocked-SIGINT cell whose code goes on after the cut sleep is ended by the SIGINT rung, its later lines unrun", async () => {
  const { outcome, report } = await interruptOnceStarted(`${BLOCKED}ctypes.CDLL(None).sleep(20)\nwhile True:\n    pass\nprint('after')`);
  expect(outcome).toMatchObject({ rung: "sigint" });
  expect(report).toMatchObject({ status: "interrupted", ended_by: "sigint", output: [] });
});
