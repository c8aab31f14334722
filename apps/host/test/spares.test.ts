import { appendFileSync, cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { and, desc, eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { kernelResets } from "../src/db/schema";
import { appendTranscript, loadTranscript } from "../src/store/transcript";
import type { Host } from "../src/runtime/host";
import type { WorkbenchPoolView } from "../src/runtime/status";
import { isAlive } from "../../../packages/supervisor/src/tree";
import { resultOf, startTestHost, tempDir } from "./helpers";

const REPO_PYTHON = fileURLToPath(new URL("../../../python", import.meta.url));

// Warm spares (C19): a pre-started workbench is what a new session's first generation runs on.
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const pool = async (host: Host) => ((await host.status()) as { workbench_pool: WorkbenchPoolView }).workbench_pool;
const lastReset = (host: Host, sessionId: string) =>
  host.db.select().from(kernelResets).where(eq(kernelResets.sessionId, sessionId)).orderBy(desc(kernelResets.id)).limit(1).get()!;

/** Wait (bounded) until the pool has a ready spare other than `not`; returns its pid. */
async function readySpare(host: Host, not?: number): Promise<number> {
  for (let i = 0; i < 1500; i++) {
    const pids = (await pool(host)).spare.pids.filter((p) => p !== not);
    if (pids.length > 0) return pids[0]!;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no spare became ready: ${JSON.stringify((await pool(host)))}`);
}

describe("warm spares", () => {
  it("a new session's first generation runs on the spare, and a new spare starts behind it", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host } = started;
    const spare = await readySpare(host);
    expect((await pool(host)).spare).toMatchObject({ target: 1, ready: 1 });
    const report = await host.execute("x = 20\nx * 2 + 2", "fresh");
    expect(resultOf(report)).toBe("42");
    const bench = host.workbenches.get("fresh")!;
    // (The pool names a spare by its guard's pid until the guard reports the worker's: count takes.)
    expect(host.workbenches.spares.taken).toBe(1);
    expect(bench.worker!.sessionId).toBe("fresh");
    expect(lastReset(host, "fresh")).toMatchObject({ generation: "g-1", reason: "session_start", pid: bench.worker!.pid });
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
    expect(host.workbenches.spares).toMatchObject({ taken: 0, discarded: 1 });
    const reset = lastReset(host, "after-skill");
    expect(reset.skillsRevision).not.toBe(before);
    expect(reset.skillsRevision).toBe(bench.skills!.revision);
    await bench.worker!.execute("1"); // still serving
    for (let i = 0; i < 500 && isAlive(stale); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(stale)).toBe(false);
    // The replacement carries the new set.
    const replacement = await readySpare(host, stale);
    expect(replacement).not.toBe(stale);
    await host.execute("1", "third");
    expect(host.workbenches.spares.taken).toBe(1);
    expect(lastReset(host, "third").skillsRevision).toBe(reset.skillsRevision);
  });

  it("a spare is taken and bound while the skills are indexed again, not after", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host } = started;
    await readySpare(host);
    // The generation's re-index looks at the pool before it indexes: the spare is already taken.
    const reindex = host.skills.reindex.bind(host.skills);
    let takenBeforeIndex: number | undefined;
    host.skills.reindex = () => {
      takenBeforeIndex = host.workbenches.spares.taken;
      return reindex();
    };
    const report = await host.execute("21 * 2", "overlap");
    host.skills.reindex = reindex;
    expect(resultOf(report)).toBe("42");
    expect(takenBeforeIndex).toBe(1);
    expect(host.workbenches.spares).toMatchObject({ taken: 1, discarded: 0 });
    expect(lastReset(host, "overlap").pid).toBe(host.workbenches.get("overlap")!.worker!.pid);
  });

  it("a spare bound early is stopped when the re-index fails: the start fails, no worker is left", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host } = started;
    const spare = await readySpare(host);
    const reindex = host.skills.reindex.bind(host.skills);
    host.skills.reindex = () => Promise.reject(Object.assign(new Error("the skills root cannot be read"), { code: "SKILL_ROOT_INVALID" }));
    await expect(host.execute("1", "no-index")).rejects.toThrow("the skills root cannot be read");
    host.skills.reindex = reindex;
    expect(host.workbenches.spares).toMatchObject({ taken: 0, discarded: 1 });
    for (let i = 0; i < 500 && isAlive(spare); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(spare)).toBe(false);
  });

  it("a take walks no runtime directory: the fingerprint is walked once at the start", async () => {
    const started = await startTestHost({ spares: 1 });
    close = started.close;
    const { host } = started;
    const { spares, runtime } = host.workbenches;
    let spare = await readySpare(host);
    expect(runtime.walks).toBe(1);
    for (const [i, session] of ["s1", "s2", "s3"].entries()) {
      await host.execute("1+1", session);
      expect(spares.taken).toBe(i + 1);
      spare = await readySpare(host, spare);
    }
    expect(spares.discarded).toBe(0);
    expect(runtime.walks).toBe(1);
  });

  it("a spare started before the runtime on disk changed is discarded, never handed out", async () => {
    // A copy of the runtime, so that editing it touches nothing but this host.
    const pythonDir = join(tempDir("klbr-py-"), "python");
    for (const pkg of ["klbr", "klbr_hooks"]) cpSync(join(REPO_PYTHON, pkg), join(pythonDir, pkg), { recursive: true, filter: (src) => !src.includes("__pycache__") });
    const started = await startTestHost({ spares: 1, pythonDir });
    close = async () => {
      await started.close();
      rmSync(dirname(pythonDir), { recursive: true, force: true });
    };
    const { host } = started;
    const stale = await readySpare(host);
    const before = host.workbenches.runtime.value();
    appendFileSync(join(pythonDir, "klbr", "worker", "main.py"), "\n# edited under a running host\n");
    for (let i = 0; i < 500 && host.workbenches.runtime.value() === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(host.workbenches.runtime.value()).not.toBe(before);
    await host.execute("1", "after-edit");
    expect(host.workbenches.spares).toMatchObject({ taken: 0, discarded: 1 });
    for (let i = 0; i < 500 && isAlive(stale); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(stale)).toBe(false);
    // The replacement imported the edited runtime: it is current and handed out.
    const replacement = await readySpare(host, stale);
    expect(replacement).not.toBe(stale);
    await host.execute("1", "next");
    expect(host.workbenches.spares).toMatchObject({ taken: 1, discarded: 1 });
  });

  it("--spare 0 keeps none", async () => {
    const started = await startTestHost({ spares: 0 });
    close = started.close;
    await started.host.execute("1", "cold");
    expect((await pool(started.host)).spare).toEqual({ target: 0, ready: 0, pids: [] });
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
    expect((await pool(host))).toMatchObject({ idle_timeout_ms: 200, culled: expect.any(Number) });
    expect((await pool(host)).culled).toBeGreaterThanOrEqual(1);
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
