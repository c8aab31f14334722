import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Server, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openTarget, type Target } from "../src/cli/target";
import { serveControl } from "../src/control/server";
import { getExecution } from "../src/store/executions";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

// Two CLI clients of one daemon, as two `klbr exec` in two terminals: each Ctrl-C reaches its own cell.
let host: Host;
let dataDir: string;
let workspace: string;
let server: Server;
let close: () => Promise<void>;
const sockets = new Set<Socket>();
let a: Target;
let b: Target;

beforeAll(async () => {
  ({ host, dataDir, workspace, close } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket);
  server.on("connection", (s: Socket) => (sockets.add(s), s.on("close", () => sockets.delete(s))));
  a = await openTarget({ dataDir });
  b = await openTarget({ dataDir });
  expect([a.embedded, b.embedded]).toEqual([false, false]);
});
afterAll(async () => {
  await a.close();
  await b.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
});

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await check()).toBe(true);
}
const running = async () => ((await host.status()) as { workbenches: Array<{ session_id: string; running: string | null }> }).workbenches.find((w) => w.session_id === "root")?.running ?? null;
const queuedCount = () => (host.cells as unknown as { queued: Map<string, string> }).queued.size;
/** A cell that runs until a file appears (interruptible: it awaits). */
const blockUntil = (file: string) => `import asyncio, os\nwhile not os.path.exists(${JSON.stringify(file)}):\n    await asyncio.sleep(0.02)\n'released'`;

describe("Ctrl-C interrupts the client's own cell, by execution id", () => {
  test("a queued client's Ctrl-C closes its own cell without running it; the running cell of the other client goes on", async () => {
    const releaseA = join(workspace, "release-a");
    const marker = join(workspace, "b-ran");
    const pa = a.execute(blockUntil(releaseA));
    await until(async () => (await running()) !== null);
    const aId = await running();
    const pb = b.execute(`open(${JSON.stringify(marker)}, 'w').write('ran')\n'b'`);
    await until(() => queuedCount() === 1);
    expect(await b.interrupt()).toMatchObject({ rung: "before_start" });
    // The other client's cell was not touched.
    expect(await running()).toBe(aId);
    writeFileSync(releaseA, "");
    const [ra, rb] = await Promise.all([pa, pb]);
    expect(ra).toMatchObject({ id: aId, status: "ok" });
    expect(rb).toMatchObject({ status: "interrupted", ended_by: "before_start", output: [] });
    expect(existsSync(marker)).toBe(false);
    expect(getExecution(host.db, rb.id)).toMatchObject({ status: "interrupted", endedBy: "before_start", code: expect.stringContaining("b-ran") });
  });

  test("a client with no cell in flight interrupts nothing; a client's Ctrl-C on its running cell interrupts only that cell", async () => {
    const pa = a.execute(blockUntil(join(workspace, "never")));
    await until(async () => (await running()) !== null);
    expect(await b.interrupt()).toEqual({ rung: "not_running" });
    const aId = await running();
    expect(aId).not.toBeNull();
    expect(await a.interrupt()).toMatchObject({ execution_id: aId });
    expect(await pa).toMatchObject({ id: aId, status: "interrupted" });
  });

  test("an execution id already used is refused before anything runs", async () => {
    const done = await a.execute("'x'");
    const client = (await import("../src/control/client")).ControlClient;
    const c = await client.connect(host.layout.controlSocket);
    try {
      await expect(c.request({ op: "exec", code: "'again'", execution_id: done.id })).rejects.toMatchObject({ code: "EXECUTION_ID_IN_USE" });
      await expect(c.request({ op: "exec", code: "'bad'", execution_id: "not an id" })).rejects.toMatchObject({ code: "CONTROL_PROTOCOL" });
    } finally {
      c.close();
    }
  });
});
