// C16 live output through the host and its control socket: what clients see while a cell runs,
// and what the host keeps (nothing). Timing-dependent cases synchronise on events: the cell waits
// for a file the test creates only after a client read the cell's output.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Server, Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { LiveOutputEvent } from "../src/cli/live-output";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import { executions } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

const MiB = 1024 * 1024;

let host: Host;
let server: Server;
let close: () => Promise<void>;
let workspace: string;
const clients: ControlClient[] = [];
const sockets = new Set<Socket>();
let ids = 0;

beforeAll(async () => {
  ({ host, close, workspace } = await startTestHost({ interruptGraceMs: 200, sigintGraceMs: 300 }));
  server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
});
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
});

async function client(): Promise<ControlClient> {
  const c = await ControlClient.connect(host.layout.controlSocket);
  clients.push(c);
  return c;
}

/** A fresh gate file the cell waits for, and the Python that waits for it. */
function gate(): { path: string; wait: string; open: () => void } {
  const path = join(workspace, `gate-${++ids}`);
  return { path, wait: `while not os.path.exists(${JSON.stringify(path)}):\n    time.sleep(0.005)\n`, open: () => writeFileSync(path, "") };
}

/** Exec with live output on `c`; `events` fills as they arrive; `done` is the reply. */
function liveExec(c: ControlClient, code: string, id = `ex-live-${++ids}`) {
  const events: LiveOutputEvent[] = [];
  c.listen((event) => {
    const e = event as LiveOutputEvent;
    if (e.type === "output" && e.execution_id === id) events.push(e);
  });
  let repliedAfter = -1;
  const done = c.request({ op: "exec", code, execution_id: id, live: true }).then((report) => {
    repliedAfter = events.length;
    return report as { status: string; output: Array<{ stream: string; text: string }>; ended_by?: string | null; execution_id?: string };
  });
  return { id, events, done, repliedAfter: () => repliedAfter, text: () => events.map((e) => e.text).join("") };
}

/** Resolves once `check` holds (polled; the cell cannot move on before the test acts, so this is not a race). */
async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for live output");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("live output to control clients (C16)", () => {
  test("a cell printing a line every 100 ms shows its first line while it is still blocked", async () => {
    const c = await client();
    const g = gate();
    const run = liveExec(c, `import os, time\nfor i in range(10000):\n    print(f'line {i}')\n    if os.path.exists(${JSON.stringify(g.path)}):\n        break\n    time.sleep(0.1)`);
    await until(() => run.events.length > 0);
    // The cell cannot have ended: it loops until this file exists, and it does not yet.
    expect(existsSync(g.path)).toBe(false);
    expect(run.events[0]).toMatchObject({ type: "output", session_id: "root", execution_id: run.id, seq: 0, stream: "stdout", text: "line 0\n", dropped_bytes: 0 });
    g.open();
    const report = await run.done;
    expect(report.status).toBe("ok");
    expect(run.repliedAfter()).toBe(run.events.length); // every output before the reply
    expect(run.text()).toBe(report.output.filter((r) => r.stream === "stdout").map((r) => r.text).join(""));
  });

  test("two clients on one execution both see it; a session watcher sees it too; nothing is stored", async () => {
    const [a, b, s] = await Promise.all([client(), client(), client()]);
    const id = `ex-two-${++ids}`;
    const seenB: LiveOutputEvent[] = [];
    const seenS: LiveOutputEvent[] = [];
    expect(await b.watchOutput({ execution_id: id }, (e) => void ((e as LiveOutputEvent).type === "output" && seenB.push(e as LiveOutputEvent)))).toBe(true);
    expect(await s.watchOutput({ session: "root" }, (e) => void ((e as LiveOutputEvent).execution_id === id && seenS.push(e as LiveOutputEvent)))).toBe(true);
    const g = gate();
    const run = liveExec(a, `import os, time\nprint('shared line')\n${g.wait}print('after the gate')`, id);
    await until(() => run.events.length > 0 && seenB.length > 0 && seenS.length > 0);
    g.open();
    await run.done;
    await until(() => seenB.length === run.events.length && seenS.length === run.events.length);
    expect(seenB.map((e) => e.text).join("")).toBe("shared line\nafter the gate\n");
    expect(seenS).toEqual(seenB);
    // The durable record holds the completion's output only, as without live output.
    const row = host.db.select().from(executions).all().find((r) => r.id === id)!;
    expect(JSON.stringify(row)).not.toContain('"seq"');
    expect(host.sqlite.prepare("select count(*) as n from sqlite_master where sql like '%dropped_bytes%'").get()).toEqual({ n: 0 });
  });

  test("a cell's thread and task output stream; a forked child's does not", async () => {
    const c = await client();
    const g = gate();
    const code = [
      "import asyncio, os, threading, time",
      "threading.Thread(target=print, args=('from a thread',)).start()",
      "async def chatter():\n    print('from a task')",
      "task = asyncio.create_task(chatter())",
      "pid = os.fork()",
      "if pid == 0:\n    print('from the child')\n    os._exit(0)",
      "os.waitpid(pid, 0)",
      `while not os.path.exists(${JSON.stringify(g.path)}):\n    await asyncio.sleep(0.005)`,
      "await task",
    ].join("\n");
    const run = liveExec(c, code);
    await until(() => run.text().includes("from a thread") && run.text().includes("from a task"));
    g.open();
    await run.done;
    expect(run.text()).not.toContain("from the child");
    expect(run.text().split("\n").filter(Boolean).sort()).toEqual(["from a task", "from a thread"]);
  });

  test("interrupt mid-stream: the cell ends interrupted and its stream ends before the reply", async () => {
    const c = await client();
    const run = liveExec(c, "import itertools, time\nfor i in itertools.count():\n    print(i)\n    time.sleep(0.001)");
    await until(() => run.events.length > 0);
    await c.request({ op: "interrupt", execution_id: run.id });
    const report = await run.done;
    expect(report.status).toBe("interrupted");
    expect(run.repliedAfter()).toBe(run.events.length);
    expect(run.events.map((e) => e.seq)).toEqual(run.events.map((_, i) => i));
  });

  test("hard stop mid-stream: a cell deaf to interrupts is stopped, and the next generation streams", async () => {
    const c = await client();
    const deaf = "import time\nwhile True:\n    try:\n        print('still here')\n        time.sleep(0.01)\n    except BaseException:\n        pass";
    const run = liveExec(c, deaf);
    await until(() => run.events.length > 0);
    await c.request({ op: "interrupt", execution_id: run.id });
    const report = await run.done;
    expect(report).toMatchObject({ status: "interrupted", ended_by: "hard_stop" });
    const count = run.events.length;
    const next = liveExec(c, "print('next generation')");
    await next.done;
    expect(next.text()).toBe("next generation\n");
    expect(run.events.length).toBe(count); // nothing of the stopped cell arrived after its reply
  });

  test("a 50 MiB print keeps host and worker memory bounded, the stream paced and the drops counted", async () => {
    const c = await client();
    const bench = ((await host.status()) as { workbenches: Array<{ session_id: string; pid: number }> }).workbenches.find((w) => w.session_id === "root")!;
    const workerBefore = peakRss(bench.pid);
    const hostBefore = process.memoryUsage().rss;
    let hostPeak = hostBefore;
    const timer = setInterval(() => (hostPeak = Math.max(hostPeak, process.memoryUsage().rss)), 5);
    const started = performance.now();
    const run = liveExec(c, "chunk = 'z' * (1 << 20)\nfor _ in range(50):\n    print(chunk)\ndel chunk");
    const report = await run.done;
    const seconds = (performance.now() - started) / 1000;
    clearInterval(timer);
    expect(report.status).toBe("ok");
    const sent = run.events.reduce((n, e) => n + Buffer.byteLength(e.text), 0);
    const dropped = run.events.reduce((n, e) => n + e.dropped_bytes, 0);
    expect(sent + dropped).toBe(50 * (MiB + 1));
    expect(dropped).toBeGreaterThan(0);
    expect(run.events.length).toBeLessThanOrEqual(20 * seconds + 1);
    expect(hostPeak - hostBefore).toBeLessThan(32 * MiB);
    expect(peakRss(bench.pid) - workerBefore).toBeLessThan(32 * MiB);
  });

  test("exec without live gets no output frames; status says the host streams", async () => {
    const c = await client();
    const pushed: unknown[] = [];
    c.listen((e) => pushed.push(e));
    await c.request({ op: "exec", code: "print('quiet')", execution_id: `ex-quiet-${++ids}` });
    expect(pushed).toEqual([]);
  });
});

function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}
