import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { SkillIndex } from "@klbr/skills";
import type { SpareWorker, StartWorkerOptions, Worker } from "@klbr/supervisor";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { incidents } from "../db/schema";
import { lastKernelReset, recordKernelReset } from "../store/kernel";
import { sqliteStore } from "../store/sqlite";
import { HostLife } from "./lifecycle";
import { Cells } from "./cells";
import { DisplayRecorder } from "./displays";
import { WorkerLaunch } from "./worker-launch";
import { Workbenches } from "./workbenches";

// Workbenches alone: generations, their kernel.reset, spares bound early or late, stops. The
// supervisor's startWorker and startSpare are stand-ins recording what they were asked (the real
// starts are the host suites'); the rest (the log, the runtime fingerprint, the start gate) is real.
const started: StartWorkerOptions[] = [];
const spares: Array<SpareWorker & { bound: string[]; stops: string[]; fail?: Error }> = [];
let startFails: Error | null = null;
/** Each cold start waits for this (a start still under way when the host begins to stop). */
let startGate: Promise<void> = Promise.resolve();
/** Cold starts that reached startGate. */
let startsAtGate = 0;
/** What the stand-in workers' hello adds (a runtime_version). */
let helloExtra: Record<string, unknown> = {};
const spareOptions: Array<Record<string, unknown>> = [];
let spareFails: Error | null = null;
const materialized: unknown[] = [];
const replies: unknown[] = [];

vi.mock("@klbr/supervisor", async (original) => ({
  ...(await original<typeof import("@klbr/supervisor")>()),
  startWorker: async (opts: StartWorkerOptions) => {
    if (startFails) throw startFails;
    startsAtGate += 1;
    await startGate;
    started.push(opts);
    return standIn(opts.generation!, 100 + started.length);
  },
  startSpare: async (opts: unknown) => {
    spareOptions.push(opts as Record<string, unknown>);
    if (spareFails) throw spareFails;
    const spare = {
      pid: 500 + spares.length,
      bound: [] as string[],
      stops: [] as string[],
      available: true,
      exited: new Promise(() => undefined),
      bind: async (sessionId: string, generation: string) => {
        spare.available = false;
        if (spare.fail) throw spare.fail;
        spare.bound.push(`${sessionId}/${generation}`);
        const w = standIn(generation, spare.pid);
        w.hardStop = async (reason: string) => (spare.stops.push(reason), undefined as never);
        return w;
      },
      discard: async () => void (spare.available = false),
    } as SpareWorker & { bound: string[]; stops: string[]; fail?: Error; available: boolean };
    spares.push(spare);
    return spare;
  },
}));

type Stand = Worker & { calls: string[]; die(exit: Record<string, unknown>): void };
function standIn(generation: string, pid: number): Stand {
  const w = {
    generation,
    pid,
    state: "ready",
    hello: { skills: "rev-hello", ...helloExtra },
    calls: [] as string[],
    deaths: [] as Array<(exit: unknown) => void>,
    onDeath: (listener: (exit: unknown) => void) => void w.deaths.push(listener),
    /** The worker dies on its own (no cell runs): its death listeners hear `exit`. */
    die: (exit: Record<string, unknown>) => {
      w.state = "dead";
      for (const listener of w.deaths) listener({ code: null, signal: "SIGKILL", tails: {}, ...exit });
    },
    exited: new Promise(() => undefined),
    shutdown: async () => (w.calls.push("shutdown"), (w.state = "dead")),
    hardStop: async (reason: string) => (w.calls.push(`hardStop ${reason}`), (w.state = "dead")),
    execute: async (code: string) => (cellOrder.push(code), await cellGate, { kind: "cell", status: "ok", output: [], truncated_bytes: 0, error: null, endedBy: "worker" }),
  };
  return w as unknown as Stand;
}

/** The cells the stand-in workers ran, in order; each waits for cellGate. */
const cellOrder: string[] = [];
let cellGate: Promise<void> = Promise.resolve();

const PYTHON_DIR = fileURLToPath(new URL("../../../../python", import.meta.url));
const index = (revision: string) => ({ revision, skills: [], refused: [] }) as unknown as SkillIndex;

let db: HostDb;
let sqlite: Parameters<typeof sqliteStore>[1];
let notes: Array<Record<string, unknown>>;
let life: HostLife;
let revision: string;
let lastIndex: SkillIndex | null;
let headerFails: Error | null;
let wbs: Workbenches[];

function workbenches({ pythonDir = PYTHON_DIR, python = "python3", ...over }: { spares?: number; startConcurrency?: number; bytecodeDir?: string | null; pythonDir?: string; python?: string; mayStart?: (sessionId: string) => boolean } = {}): Workbenches {
  const sandbox = { describe: () => ({ mode: "none" }), worker: (ro: string[]) => ({ mode: "none", ro }) };
  const launch = new WorkerLaunch({ python, pythonDir, workspace: mkdtempSync(join(tmpdir(), "klbr-wbs-")), sandbox: sandbox as never, passEnv: [], interruptGraceMs: 7, liveOutput: true });
  const w = new Workbenches({
    store: sqliteStore(db, sqlite),
    now: () => T0,
    notify: (n) => void notes.push(n as never),
    life,
    launch,
    skills: {
      reindex: async () => (lastIndex = index(revision)),
      materialize: (i: SkillIndex, dir: string) => void materialized.push([i.revision, dir]),
      sources: () => [],
      get lastIndex() {
        return lastIndex;
      },
    } as never,
    headers: {
      observeGeneration: () => {
        if (headerFails) throw headerFails;
      },
    } as never,
    onHostReply: (event) => void replies.push(event),
    bytecodeDir: null,
    ...over,
  });
  wbs.push(w);
  return w;
}
const incidentKinds = () => db.select().from(incidents).all().map((i) => i.kind);

beforeEach(() => {
  started.length = 0;
  spares.length = 0;
  cellOrder.length = 0;
  spareOptions.length = 0;
  spareFails = null;
  materialized.length = 0;
  replies.length = 0;
  cellGate = Promise.resolve();
  startFails = null;
  startGate = Promise.resolve();
  startsAtGate = 0;
  helloExtra = {};
  ({ db, sqlite } = memoryDb());
  notes = [];
  life = new HostLife();
  revision = "r1";
  lastIndex = null;
  headerFails = null;
  wbs = [];
});
afterEach(async () => {
  for (const w of wbs) {
    await w.spares.stop();
    w.runtime.close();
  }
});

describe("Workbenches generations", () => {
  it("starts a session's first generation once, with its reason in kernel.reset and the notification", async () => {
    const w = workbenches();
    const [a, b] = await Promise.all([w.ensure("s", "session_start"), w.ensure("s", "session_start")]);
    expect(a).toBe(b);
    expect(started).toHaveLength(1);
    expect(w.coldStarts).toBe(1);
    expect(a.generation).toBe("g-1");
    expect(a.skills).toEqual(index("r1"));
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-1", reason: "session_start", skillsRevision: "rev-hello", pid: 101, atMs: T0 });
    expect(notes).toEqual([{ type: "kernel.reset", session_id: "s", generation: "g-1", skills: "rev-hello", at_ms: T0 }]);
    expect(w.get("s")).toBe(a);
    expect(w.all()).toEqual([a]);
    expect(w.sessionIds()).toEqual(["s"]);
    expect(w.workers()).toEqual([a.worker]);
    expect(a.idle).toBe(true);
  });

  it("builds the worker's options from the launch: identity, runtime, skills, graces, live output", async () => {
    const w = workbenches();
    await w.ensure("s", "session_start");
    const opts = started[0]!;
    expect(opts).toMatchObject({ role: "workbench", sessionId: "s", generation: "g-1", command: ["python3", "-B", "-m", "klbr.worker"], pythonPath: [PYTHON_DIR], expect: { revision: null, skills: "r1" }, interruptGraceMs: 7, liveOutput: true, sandbox: { mode: "none", ro: [] } });
    expect(opts.sigintGraceMs).toBeUndefined();
  });

  it("a restart shuts the live worker down first, numbers the next generation and clears the cull", async () => {
    const w = workbenches();
    const bench = await w.ensure("s", "session_start");
    const first = bench.worker as Stand;
    bench.endedFor = "idle_culled";
    bench.culledAtMs = 5;
    await w.restart(bench, "operator");
    expect(first.calls).toEqual(["shutdown"]);
    expect(bench.generation).toBe("g-2");
    expect(bench.endedFor).toBeNull();
    expect(bench.culledAtMs).toBeNull();
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-2", reason: "operator" });
    // A dead worker is not shut down again.
    const second = bench.worker as Stand;
    (second as { state: string }).state = "dead";
    await w.restart(bench, "worker_died");
    expect(second.calls).toEqual([]);
    expect(bench.generation).toBe("g-3");
  });

  it("counts generations on from the log (a restarted host), whatever the last id looked like", async () => {
    recordKernelReset(db, { sessionId: "s", generation: "g-41", skillsRevision: null, pid: 1, reason: "x", atMs: 1 });
    recordKernelReset(db, { sessionId: "t", generation: "odd", skillsRevision: null, pid: 1, reason: "x", atMs: 1 });
    recordKernelReset(db, { sessionId: "u", generation: "9g-", skillsRevision: null, pid: 1, reason: "x", atMs: 1 });
    const w = workbenches();
    expect((await w.ensure("s", "host_start")).generation).toBe("g-42");
    expect((await w.ensure("t", "host_start")).generation).toBe("g-1");
    expect((await w.ensure("u", "host_start")).generation).toBe("g-1"); // only a leading g- is the counter's prefix
  });

  it("a header that cannot be observed fails the start after its kernel.reset, and nothing is announced", async () => {
    headerFails = new Error("damaged");
    const w = workbenches();
    // toBe, not toThrow: vitest's rejects.toThrow("damaged") also passes when the rejection is undefined.
    await expect(w.ensure("s", "session_start")).rejects.toBe(headerFails);
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-1" });
    expect(notes).toEqual([]);
    expect(w.get("s")!.idle).toBe(true);
  });

  it("a header observer that throws nothing usable still fails the start, with a message", async () => {
    const w = workbenches();
    const headers = (w as unknown as { deps: { headers: { observeGeneration: () => void } } }).deps.headers;
    headers.observeGeneration = () => {
      throw undefined;
    };
    await expect(w.ensure("s", "session_start")).rejects.toMatchObject({ message: "the header could not be observed" });
  });

  it("observes the header from the new generation's skill set", async () => {
    const w = workbenches();
    const seen: unknown[] = [];
    const deps = (w as unknown as { deps: { headers: { observeGeneration: (s: string, sources: (adopted: unknown) => unknown) => void }; skills: { sources: (i: SkillIndex, a: unknown) => unknown } } }).deps;
    deps.skills.sources = (i, adopted) => [`skills ${i.revision}`, adopted];
    deps.headers.observeGeneration = (sessionId, sources) => void seen.push([sessionId, sources("adopted-orientation")]);
    revision = "r7";
    await w.ensure("s", "session_start");
    expect(seen).toEqual([["s", ["skills r7", "adopted-orientation"]]]);
  });

  it("a worker whose hello names another runtime version is an incident naming the workbench", async () => {
    helloExtra = { runtime_version: "0.0.0-elsewhere" };
    const w = workbenches();
    await w.ensure("s", "session_start");
    expect(db.select().from(incidents).all()).toMatchObject([
      { kind: "worker.runtime_version_mismatch", detail: { role: "workbench", session_id: "s", generation: "g-1", worker_version: "0.0.0-elsewhere" }, atMs: T0 },
    ]);
  });

  it("a limit that ends the worker between cells is an incident naming it, at the host's time (C17)", async () => {
    const w = workbenches();
    const bench = await w.ensure("s", "session_start");
    (bench.worker as Stand).die({ reason: "memory_limit", detail: "memory 128MiB" });
    expect(db.select().from(incidents).all()).toMatchObject([
      { kind: "workbench.limit", detail: { role: "workbench", session_id: "s", generation: "g-1", reason: "memory_limit", detail: "memory 128MiB", between_cells: true }, atMs: T0 },
    ]);
    expect(bench.endedFor).toBe("memory_limit");
  });

  it("a worker that comes up after the host began to stop is shut down, and the start fails naming the workbench", async () => {
    const w = workbenches();
    let open!: () => void;
    startGate = new Promise((r) => (open = r));
    const starting = w.ensure("s", "session_start");
    for (let i = 0; i < 50 && startsAtGate === 0; i++) await new Promise((r) => setImmediate(r));
    expect(startsAtGate).toBe(1);
    life.beginStop();
    open();
    await expect(starting).rejects.toMatchObject({ code: "HOST_STOPPING", message: "the host stopped while a workbench s worker started; it was shut down" });
  });

  it("a start that waited for its turn while the host began to stop never spawns", async () => {
    const w = workbenches({ startConcurrency: 1 });
    let open!: () => void;
    startGate = new Promise((r) => (open = r));
    const first = w.ensure("s", "session_start");
    const second = w.ensure("t", "session_start");
    for (let i = 0; i < 50 && (startsAtGate === 0 || w.starts.queued === 0); i++) await new Promise((r) => setImmediate(r));
    expect([startsAtGate, w.starts.queued]).toEqual([1, 1]);
    life.beginStop();
    open();
    await expect(first).rejects.toMatchObject({ code: "HOST_STOPPING" });
    await expect(second).rejects.toMatchObject({ code: "HOST_STOPPING", message: "the host is stopping; no workbench t worker is started" });
    expect(w.coldStarts).toBe(1);
  });

  it("starts nothing once the host stops", async () => {
    const w = workbenches();
    life.beginStop();
    await expect(w.ensure("s", "session_start")).rejects.toMatchObject({ code: "HOST_STOPPING", message: "the host is stopping; no workbench s worker is started" });
    expect(started).toHaveLength(0);
  });

  it("skillSet, idle, closed sessions", async () => {
    const w = workbenches();
    expect(() => w.skillSet("s")).toThrow(expect.objectContaining({ code: "unavailable", message: "session s has no workbench generation with a skill set" }));
    expect(w.idle("s")).toBe(true);
    const bench = await w.ensure("s", "session_start");
    expect(w.skillSet("s")).toEqual(index("r1"));
    const release = await bench.acquire();
    expect(w.idle("s")).toBe(false);
    release();
    expect(w.closed("s")).toBe(false);
    w.refuseClosed("s");
    w.markClosed("s");
    expect(w.closed("s")).toBe(true);
    expect(() => w.refuseClosed("s")).toThrow(expect.objectContaining({ code: "SESSION_STOPPED", message: "session s is stopped (peer.stop); it runs no more cells" }));
  });
});

describe("a new session's first cells", () => {
  // Found by these tests (issue 38): ensure gave the slot back between the first generation's start
  // and the first cell, so a second cell that arrived meanwhile took it and ran first.
  it("run in arrival order while its first generation starts", async () => {
    const w = workbenches();
    let open!: () => void;
    cellGate = new Promise((r) => (open = r));
    const cells = new Cells({
      store: sqliteStore(db, sqlite),
      now: () => T0,
      newId: (() => {
        let n = 0;
        return (p: string) => `${p}-${++n}`;
      })(),
      notify: () => undefined,
      life,
      workbenches: w,
      hooks: { release: () => undefined } as never,
      requestLog: { opened: () => 1 } as never,
      liveOutput: null,
      displays: new DisplayRecorder({ store: sqliteStore(db, sqlite), now: () => T0, publish: null }),
      observeInstructions: async () => undefined,
      services: () => ({}) as never,
    });
    const runs = ["first", "second", "third"].map((code) => cells.execute(code, "s"));
    for (let i = 0; i < 20 && cellOrder.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(cellOrder).toEqual(["first"]);
    open();
    const reports = await Promise.all(runs);
    expect(cellOrder).toEqual(["first", "second", "third"]);
    expect(reports.map((r) => r.id)).toEqual(["ex-1", "ex-2", "ex-3"]);
    expect(started).toHaveLength(1);
  });

  it("ensureHeld hands the start's slot to its caller; a failed start gives it back", async () => {
    const w = workbenches();
    const first = w.ensureHeld("s", "session_start");
    const second = w.ensureHeld("s", "session_start");
    const a = await first;
    let secondHeld = false;
    void second.then(() => (secondHeld = true));
    await new Promise((r) => setImmediate(r));
    expect(secondHeld).toBe(false);
    a.release();
    (await second).release();
    expect(a.bench.idle).toBe(true);
    startFails = new Error("no python");
    await expect(w.ensureHeld("t", "session_start")).rejects.toBe(startFails);
    expect(w.get("t")!.idle).toBe(true);
    // The session that never got a worker has none for the host to stop.
    expect(w.workers()).toEqual([a.bench.worker]);
  });
});

describe("a session this host may not start (C21: its lease was lost)", () => {
  const refused = { code: "SESSION_NOT_HELD", message: "session s is not held by this host (its lease was lost); no workbench generation starts here" };

  it("gets no first generation: no worker, no spare taken, no kernel.reset, nothing announced", async () => {
    const w = workbenches({ spares: 1, mayStart: (sessionId) => sessionId !== "s" });
    await w.ensure("first", "session_start"); // makes the last index r1, so a spare could be bound early
    await w.spares.fill();
    await expect(w.ensure("s", "session_start")).rejects.toMatchObject(refused);
    expect(spares[0]!.bound).toEqual([]);
    expect(w.spares.taken).toBe(0);
    expect(started.map((o) => o.sessionId)).toEqual(["first"]);
    expect(lastKernelReset(db, "s")).toBeUndefined();
    expect(notes.map((n) => n.session_id)).toEqual(["first"]);
    expect(w.get("s")!.worker).toBeNull();
    expect(w.get("s")!.idle).toBe(true);
  });

  it("lost while its worker comes up: the worker is hard-stopped and nothing of the generation is recorded", async () => {
    let held = true;
    const w = workbenches({ mayStart: () => held });
    let open!: () => void;
    startGate = new Promise((r) => (open = r));
    const starting = w.ensure("s", "session_start");
    for (let i = 0; i < 50 && startsAtGate === 0; i++) await new Promise((r) => setImmediate(r));
    expect(startsAtGate).toBe(1);
    held = false;
    open();
    await expect(starting).rejects.toMatchObject(refused);
    expect(started).toHaveLength(1);
    expect(lastKernelReset(db, "s")).toBeUndefined();
    expect(notes).toEqual([]);
    expect(w.get("s")!.worker).toBeNull();
  });

  it("a restart is refused after the old worker was shut down; held again, the session starts as usual", async () => {
    let held = true;
    const w = workbenches({ mayStart: () => held });
    const bench = await w.ensure("s", "session_start");
    const first = bench.worker as Stand;
    held = false;
    await expect(w.restart(bench, "after_failed")).rejects.toMatchObject(refused);
    expect(first.calls).toEqual(["shutdown"]);
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-1" });
    held = true;
    await w.restart(bench, "host_failover");
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-2", reason: "host_failover" });
  });

  it("a cell whose worker died is not followed by a restart nor a restart_failed incident", async () => {
    let held = true;
    const w = workbenches({ mayStart: () => held });
    const cells = new Cells({
      store: sqliteStore(db, sqlite),
      now: () => T0,
      newId: (p: string) => `${p}-1`,
      notify: () => undefined,
      life,
      workbenches: w,
      hooks: { release: () => undefined } as never,
      requestLog: { opened: () => 1 } as never,
      liveOutput: null,
      displays: new DisplayRecorder({ store: sqliteStore(db, sqlite), now: () => T0, publish: null }),
      observeInstructions: async () => undefined,
      services: () => ({}) as never,
    });
    const bench = await w.ensure("s", "session_start");
    const worker = bench.worker as Stand;
    // The loss kills the tree while the cell runs (HostLeasing.stopSession).
    worker.execute = (async () => {
      held = false;
      (worker as { state: string }).state = "dead";
      return { kind: "cell", status: "failed", output: [], truncated_bytes: 0, error: "killed", endedBy: "host" };
    }) as never;
    await cells.execute("x", "s");
    expect(started).toHaveLength(1);
    expect(lastKernelReset(db, "s")).toMatchObject({ generation: "g-1" });
    expect(incidentKinds()).toEqual([]);
  });
});

describe("Workbenches.stop", () => {
  it("drains in the slot (after the running cell), or hard-stops now; a dead worker or unknown session is left", async () => {
    const w = workbenches();
    const bench = await w.ensure("s", "session_start");
    const worker = bench.worker as Stand;
    const cell = await bench.acquire();
    let stopped = false;
    const stopping = w.stop("s", true).then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    cell();
    await stopping;
    expect(worker.calls).toEqual(["shutdown"]);
    await w.stop("s", true);
    await w.stop("s", false);
    expect(worker.calls).toEqual(["shutdown"]);
    await w.stop("nobody", false);
    const other = await w.ensure("t", "session_start");
    await w.stop("t", false);
    expect((other.worker as Stand).calls).toEqual(["hardStop peer.stop"]);
  });

  it("a drain while the host stops leaves the shutdown to the host", async () => {
    const w = workbenches();
    const bench = await w.ensure("s", "session_start");
    life.beginStop();
    await w.stop("s", true);
    expect((bench.worker as Stand).calls).toEqual([]);
  });
});

describe("Workbenches on spares", () => {
  it("a spare starts with a cold start's options, without the identity, and none while the host stops", async () => {
    const w = workbenches({ spares: 1 });
    await w.spares.fill();
    const opts = spareOptions[0]!;
    expect(opts).toMatchObject({ command: ["python3", "-B", "-m", "klbr.worker"], expect: { revision: null, skills: "r1" }, interruptGraceMs: 7, liveOutput: true });
    expect(opts.sessionId).toBeUndefined();
    (opts.materialize as (d: string) => void)("/tmp/skills-dir");
    expect(materialized).toEqual([["r1", "/tmp/skills-dir"]]);
    (opts.onHostReply as (e: unknown) => void)({ reply: 1 });
    expect(replies).toEqual([{ reply: 1 }]);
    const stopping = workbenches({ spares: 1 });
    life.beginStop();
    await stopping.spares.fill();
    expect(spareOptions).toHaveLength(1);
  });

  it("a spare that cannot start is an incident", async () => {
    spareFails = new Error("fork failed");
    const w = workbenches({ spares: 1 });
    await w.spares.fill();
    expect(db.select().from(incidents).all()).toMatchObject([{ kind: "spare.start_failed", detail: { error: "fork failed" }, atMs: T0 }]);
  });

  it("binds a current spare to the generation (no cold start) and counts it taken", async () => {
    const w = workbenches({ spares: 1 });
    await w.spares.fill();
    expect(spares).toHaveLength(1);
    const bench = await w.ensure("s", "session_start");
    expect(spares[0]!.bound).toEqual(["s/g-1"]);
    expect(w.coldStarts).toBe(0);
    expect(bench.worker!.pid).toBe(500);
    expect(w.spares.taken).toBe(1);
  });

  it("a spare bound early for the last index is stopped when the index changed, and the generation starts cold", async () => {
    const w = workbenches({ spares: 1 });
    await w.ensure("first", "session_start"); // makes the last index r1
    await w.spares.fill();
    revision = "r2";
    const bench = await w.ensure("s", "session_start");
    expect(spares[0]!.bound).toEqual(["s/g-1"]);
    await new Promise((r) => setImmediate(r));
    expect(spares[0]!.stops).toEqual(["spare_stale"]);
    expect(w.coldStarts).toBe(2);
    expect(started.at(-1)!.expect).toEqual({ revision: null, skills: "r2" });
    expect(bench.skills!.revision).toBe("r2");
    expect([w.spares.taken, w.spares.discarded]).toEqual([0, 1]);
  });

  it("a spare bound early is stopped when the index fails, and the start fails", async () => {
    const w = workbenches({ spares: 1 });
    await w.ensure("first", "session_start");
    await w.spares.fill();
    const skills = (w as unknown as { deps: { skills: { reindex: () => Promise<SkillIndex> } } }).deps.skills;
    skills.reindex = async () => Promise.reject(new Error("roots gone"));
    await expect(w.ensure("s", "session_start")).rejects.toThrow("roots gone");
    await new Promise((r) => setImmediate(r));
    expect(spares[0]!.stops).toEqual(["spare_unused"]);
    expect([w.spares.taken, w.spares.discarded]).toEqual([0, 1]);
  });

  it("a spare that becomes ready while the generation's skills are indexed is taken: no cold start", async () => {
    const w = workbenches({ spares: 1 });
    lastIndex = index("r1"); // a spare could be bound early: none is ready yet
    const skills = (w as unknown as { deps: { skills: { reindex: () => Promise<SkillIndex> } } }).deps.skills;
    const reindex = skills.reindex;
    let filled = false;
    skills.reindex = async () => {
      if (!filled) {
        filled = true;
        await w.spares.fill(); // its own reindex comes back here, with filled set
      }
      return reindex();
    };
    const bench = await w.ensure("s", "session_start");
    expect(spares).toHaveLength(1);
    expect(spares[0]!.bound).toEqual(["s/g-1"]);
    expect(w.coldStarts).toBe(0);
    expect(bench.worker!.pid).toBe(500);
  });

  it("a spare whose runtime on disk changed since it started is not taken: the generation starts cold on the new runtime", async () => {
    const pythonDir = mkdtempSync(join(tmpdir(), "klbr-wbs-py-"));
    mkdirSync(join(pythonDir, "klbr"));
    writeFileSync(join(pythonDir, "klbr", "worker.py"), "# one\n");
    const w = workbenches({ spares: 1, pythonDir });
    await w.spares.fill();
    const before = w.runtime.value();
    writeFileSync(join(pythonDir, "klbr", "worker.py"), "# two, longer\n");
    // The runtime is watched: poll (bounded) until the change is seen.
    for (let i = 0; i < 200 && w.runtime.value() === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(w.runtime.value()).not.toBe(before);
    const bench = await w.ensure("s", "session_start");
    expect(spares[0]!.bound).toEqual([]);
    expect(w.coldStarts).toBe(1);
    expect(bench.worker!.pid).toBe(101);
    expect(w.spares.discarded).toBe(1);
    rmSync(pythonDir, { recursive: true, force: true });
  });

  it("a spare that dies at its bind is an incident, and the generation starts cold", async () => {
    const w = workbenches({ spares: 1 });
    await w.spares.fill();
    spares[0]!.fail = new Error("spare died");
    const bench = await w.ensure("s", "session_start");
    expect(db.select().from(incidents).all()).toMatchObject([{ kind: "spare.bind_failed", detail: { session_id: "s", generation: "g-1", error: "spare died" }, atMs: T0 }]);
    expect(w.coldStarts).toBe(1);
    expect(bench.worker!.pid).toBe(101);
  });
});

describe("Workbenches on the runtime's bytecode", () => {
  // The cache is keyed by the interpreter's real path, so it needs one (a bare "python3" turns it off).
  const python = execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();

  /** Runs `body` with KLBR_BYTECODE_CACHE (the default cache directory) set to a new directory. */
  async function withDefaultCache(body: (defaultDir: string) => Promise<void>): Promise<void> {
    const saved = process.env.KLBR_BYTECODE_CACHE;
    const defaultDir = mkdtempSync(join(tmpdir(), "klbr-wbs-default-"));
    process.env.KLBR_BYTECODE_CACHE = defaultDir;
    try {
      await body(defaultDir);
    } finally {
      if (saved === undefined) delete process.env.KLBR_BYTECODE_CACHE;
      else process.env.KLBR_BYTECODE_CACHE = saved;
      rmSync(defaultDir, { recursive: true, force: true });
    }
  }

  it("a generation started once it is built imports klbr from it: first on its path, shown read-only in its sandbox; the option's directory wins", async () => {
    await withDefaultCache(async (defaultDir) => {
      const dir = mkdtempSync(join(tmpdir(), "klbr-wbs-bc-"));
      const w = workbenches({ bytecodeDir: dir, python });
      await w.prepareBytecode();
      await w.ensure("s", "session_start");
      const path = started[0]!.pythonPath!;
      expect(path).toHaveLength(2);
      expect(dirname(path[0]!)).toBe(dir);
      expect(path[1]).toBe(PYTHON_DIR);
      expect(started[0]!.sandbox).toEqual({ mode: "none", ro: [path[0]] });
      expect(readdirSync(defaultDir)).toEqual([]);
      rmSync(dir, { recursive: true, force: true });
    });
  });

  it("without the option it is kept in the default cache directory", async () => {
    await withDefaultCache(async (defaultDir) => {
      const w = workbenches({ bytecodeDir: undefined, python });
      await w.prepareBytecode();
      await w.ensure("s", "session_start");
      expect(dirname(started[0]!.pythonPath![0]!)).toBe(defaultDir);
    });
  });

  it("a cache directory that cannot be made is an incident, and workers start from the sources", async () => {
    const parent = mkdtempSync(join(tmpdir(), "klbr-wbs-bad-"));
    writeFileSync(join(parent, "a-file"), "");
    const w = workbenches({ bytecodeDir: join(parent, "a-file", "bytecode"), python });
    await w.prepareBytecode();
    expect(db.select().from(incidents).all()).toMatchObject([{ kind: "bytecode.build_failed", detail: { error: expect.stringContaining("ENOTDIR") }, atMs: T0 }]);
    await w.ensure("s", "session_start");
    expect(started[0]).toMatchObject({ pythonPath: [PYTHON_DIR], sandbox: { mode: "none", ro: [] } });
    rmSync(parent, { recursive: true, force: true });
  });
});
