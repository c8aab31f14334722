import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { and, desc, eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { kernelResets } from "../src/db/schema";
import { appendTranscript, loadTranscript } from "../src/store/transcript";
import type { Host } from "../src/runtime/host";
import type { WorkbenchPoolView } from "../src/runtime/status";
import { isAlive } from "../../../packages/supervisor/src/tree";
import { resultOf, startTestHost } from "./helpers";

// Warm spares (C19): a pre-started workbench is what a new session's first generation runs on.
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const pool = (host: Host) => (host.status() as { workbench_pool: WorkbenchPoolView }).workbench_pool;
const lastReset = (host: Host, sessionId: string) =>
  host.db.select().from(kernelResets).where(eq(kernelResets.sessionId, sessionId)).orderBy(desc(kernelResets.id)).limit(1).get()!;

/** Wait (bounded) until the pool has a ready spare other than `not`; returns its pid. */
async function readySpare(host: Host, not?: number): Promise<number> {
  for (let i = 0; i < 1500; i++) {
    const pids = pool(host).spare.pids.filter((p) => p !== not);
    if (pids.length > 0) return pids[0]!;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no spare became ready: ${JSON.stringify(pool(host))}`);
}

describe("warm spares", () => {
  it("a new session's first generation runs on the spare, and a new spare starts behind it", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host } = started;
    const spare = await readySpare(host);
    expect(pool(host).spare).toMatchObject({ target: 1, ready: 1 });
    const report = await host.execute("x = 20\nx * 2 + 2", "fresh");
    expect(resultOf(report)).toBe("42");
    const bench = host.workbenches.get("fresh")!;
    expect(bench.worker!.pid).toBe(spare);
    expect(bench.worker!.sessionId).toBe("fresh");
    expect(lastReset(host, "fresh")).toMatchObject({ generation: "g-1", reason: "session_start", pid: spare });
    // Its namespace is the session's own from here on.
    expect(resultOf(await host.execute("x", "fresh"))).toBe("20");
    const next = await readySpare(host, spare);
    expect(next).not.toBe(spare);
  });

  it("a spare whose skill set is stale is discarded, never handed out", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host, workspace } = started;
    const stale = await readySpare(host);
    const before = lastReset(host, "root").skillsRevision;
    mkdirSync(join(workspace, "skills", "fresh_skill"), { recursive: true });
    writeFileSync(join(workspace, "skills", "fresh_skill", "SKILL.md"), "# fresh_skill\n\nA skill written after the spare started.\n");
    await host.execute("1", "after-skill");
    const bench = host.workbenches.get("after-skill")!;
    expect(bench.worker!.pid).not.toBe(stale);
    const reset = lastReset(host, "after-skill");
    expect(reset.skillsRevision).not.toBe(before);
    expect(reset.skillsRevision).toBe(bench.skills!.revision);
    await bench.worker!.execute("1"); // still serving
    for (let i = 0; i < 500 && isAlive(stale); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(stale)).toBe(false);
    // The replacement carries the new set.
    const replacement = await readySpare(host, stale);
    await host.execute("1", "third");
    expect(host.workbenches.get("third")!.worker!.pid).toBe(replacement);
    expect(lastReset(host, "third").skillsRevision).toBe(reset.skillsRevision);
  });

  it("--spare 0 keeps none", async () => {
    const started = await startTestHost({ spares: 0 });
    close = started.close;
    await started.host.execute("1", "cold");
    expect(pool(started.host).spare).toEqual({ target: 0, ready: 0, pids: [] });
  });

  it("a spare is stopped with its host", async () => {
    const started = await startTestHost({ spares: 2 });
    const spare = await readySpare(started.host);
    await started.close();
    expect(isAlive(spare)).toBe(false);
  });
});

describe("idle culling", () => {
  it("culls an idle workbench; its next cell runs in a new generation whose kernel.reset says idle_culled", async () => {
    const started = await startTestHost({ idleTimeoutMs: 200 });
    close = started.close;
    const { host } = started;
    const culled = new Promise<unknown>((resolve) => host.subscribe((n) => n.type === "workbench.culled" && n.session_id === "sleepy" && resolve(n)));
    await host.execute("x = 1", "sleepy");
    const pid = host.workbenches.get("sleepy")!.worker!.pid;
    expect(await culled).toMatchObject({ type: "workbench.culled", session_id: "sleepy", generation: "g-1" });
    expect(isAlive(pid)).toBe(false);
    expect(pool(host)).toMatchObject({ idle_timeout_ms: 200, culled: expect.any(Number) });
    expect(pool(host).culled).toBeGreaterThanOrEqual(1);
    const after = await host.execute("x", "sleepy");
    expect(after.status).toBe("error");
    expect(after.error).toMatch(/NameError/);
    expect(lastReset(host, "sleepy")).toMatchObject({ generation: "g-2", reason: "idle_culled" });
  });

  it("tells the model, in its next cell's result, that the namespace was culled", async () => {
    const started = await startTestHost({ idleTimeoutMs: 200 });
    close = started.close;
    const { host } = started;
    const culled = new Promise<void>((resolve) => host.subscribe((n) => n.type === "workbench.culled" && n.session_id === "model" && resolve()));
    const first = await host.execute("x = 1", "model");
    const second = await host.execute("y = 2", "model");
    await culled;
    const third = await host.execute("x", "model");
    for (const [i, e] of [first, second, third].entries()) appendTranscript(host.db, { sessionId: "model", kind: "cell", ref: e.id, requestId: `r${i}`, callId: `c${i}`, atMs: Date.now() });
    const cells = loadTranscript(host.sqlite, "model", 0).map((r) => (r.kind === "cell" ? r.result.namespace_lost : "other"));
    expect(cells).toEqual([undefined, undefined, "idle_culled"]);
  });

  it("never culls a workbench while a cell runs, however long", async () => {
    const started = await startTestHost({ idleTimeoutMs: 60_000 });
    close = started.close;
    const { host, workspace } = started;
    const gate = join(workspace, "gate");
    const running = host.execute(`import os, time\nopen('started', 'w').close()\nwhile not os.path.exists(${JSON.stringify(gate)}): time.sleep(0.005)\n'done'`, "busy");
    for (let i = 0; i < 1500 && !existsSync(join(workspace, "started")); i++) await new Promise((r) => setTimeout(r, 10));
    const culler = host.culler!;
    const culled: string[] = [];
    host.subscribe((n) => n.type === "workbench.culled" && culled.push(n.session_id));
    const worker = host.workbenches.get("busy")!.worker!;
    await culler.sweep(performance.now() + 10 * 60_000);
    expect(culled).toEqual(["root"]); // the idle root goes; the busy session stays
    expect(worker.state).toBe("busy");
    writeFileSync(gate, "");
    expect(resultOf(await running)).toBe("'done'");
    // Once it is idle, past the timeout it goes.
    await culler.sweep(performance.now() + 10 * 60_000);
    expect(culled).toEqual(["root", "busy"]);
    expect(worker.state).toBe("dead");
  });
});
