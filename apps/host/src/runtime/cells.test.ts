import type { CellCompletion, HostRequest, HostRequestContext, Worker } from "@klbr/supervisor";
import { beforeEach, describe, expect, it } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { incidents } from "../db/schema";
import { getExecution } from "../store/executions";
import { sqliteStore } from "../store/sqlite";
import type Database from "better-sqlite3";
import { Cells } from "./cells";
import { DisplayRecorder } from "./displays";
import type { LiveExecution } from "./live-execution";
import { Workbench } from "./workbench";

// Cells alone: one session's queue, the durable record from start to end, restarts after a death
// and a cull, interrupts by id and by session (queued or running), and the scope a host request is
// checked against. The workers are stand-ins scripted per test; the log is a migrated in-memory one.
type Script = (code: string, opts: { id: string; onHostRequest: (r: HostRequest, c: HostRequestContext) => Promise<unknown> }) => Promise<Record<string, unknown>>;

interface Stand {
  state: string;
  generation: string;
  script: Script;
  interrupts: string[];
}

let db: HostDb;
let sqlite: Database.Database;
let notes: Array<Record<string, unknown>>;
let restarts: Array<[string, string]>;
let benches: Map<string, Workbench>;
let closed: Set<string>;
let stopping: boolean;
let released: string[];
let opened: unknown[];
let services: () => unknown;
let observe: (sessionId: string) => void;
let restartFails: Error | null;
let nextScript: Script;
let generations: number;
let ids: number;

const ok = (output: Array<{ stream: string; text: string }> = []): Awaited<ReturnType<Script>> => ({ kind: "cell", status: "ok", output, truncated_bytes: 0, error: null, endedBy: "worker" });

function standIn(): Worker & Stand {
  const w: Stand = {
    state: "ready",
    generation: `g-${++generations}`,
    script: nextScript,
    interrupts: [],
  };
  return Object.assign(w, {
    execute: async (code: string, opts: never) => {
      w.state = "busy";
      try {
        return (await w.script(code, opts)) as unknown as CellCompletion;
      } finally {
        if (w.state === "busy") w.state = "ready";
      }
    },
    interrupt: async (id: string) => (w.interrupts.push(id), { rung: "message" }),
  }) as unknown as Worker & Stand;
}

function cells(liveOutput: unknown = null): Cells {
  return new Cells({
    store: sqliteStore(db, sqlite),
    now: () => T0,
    newId: (p) => `${p}-${++ids}`,
    notify: (n) => void notes.push(n as never),
    life: {
      get stopping() {
        return stopping;
      },
    } as never,
    workbenches: {
      // As Workbenches.ensureHeld: a new session's first generation starts in the slot it hands over.
      ensureHeld: async (sessionId: string, reason: string) => {
        const existing = benches.get(sessionId);
        if (existing) return { bench: existing, release: await existing.acquire() };
        const b = new Workbench(sessionId);
        benches.set(sessionId, b);
        const release = await b.acquire();
        await turn();
        restarts.push([sessionId, reason]);
        if (restartFails) {
          release();
          throw restartFails;
        }
        b.worker = standIn();
        return { bench: b, release };
      },
      restart: async (b: Workbench, reason: string) => {
        restarts.push([b.sessionId, reason]);
        if (restartFails) throw restartFails;
        b.worker = standIn();
        b.endedFor = null;
      },
      refuseClosed: (sessionId: string) => {
        if (closed.has(sessionId)) throw Object.assign(new Error(`session ${sessionId} is stopped`), { code: "SESSION_STOPPED" });
      },
      closed: (sessionId: string) => closed.has(sessionId),
      all: () => [...benches.values()],
    } as never,
    hooks: { release: (live: LiveExecution) => void released.push(live.id) } as never,
    requestLog: { opened: (...args: unknown[]) => (opened.push(args), opened.length) } as never,
    liveOutput: liveOutput as never,
    displays: new DisplayRecorder({ store: sqliteStore(db, sqlite), now: () => T0, publish: null }),
    observeInstructions: async (s) => observe(s),
    services: () => services() as never,
  });
}

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const turn = () => new Promise<void>((r) => setImmediate(r));
const incidentKinds = () => db.select().from(incidents).all().map((i) => i.kind);

beforeEach(() => {
  ({ db, sqlite } = memoryDb());
  notes = [];
  restarts = [];
  benches = new Map();
  closed = new Set();
  stopping = false;
  released = [];
  opened = [];
  services = () => ({ status: { inspect: async (s: string) => ({ inspected: s }) } });
  observe = () => undefined;
  restartFails = null;
  nextScript = async () => ok([{ stream: "stdout", text: "hi\n" }]);
  generations = 0;
  ids = 0;
});

describe("Cells.execute", () => {
  it("starts the session's workbench, records the cell from start to end and announces it", async () => {
    const report = await cells().execute("print('hi')", "s1");
    expect(restarts).toEqual([["s1", "session_start"]]);
    expect(report).toMatchObject({ id: "ex-1", session_id: "s1", generation: "g-1", status: "ok", output: [{ stream: "stdout", text: "hi\n" }], started_at_ms: T0, ended_at_ms: T0 });
    expect(getExecution(db, "ex-1")).toMatchObject({ code: "print('hi')", status: "ok", origin: "exec" });
    expect(notes).toEqual([{ type: "execution", session_id: "s1", execution_id: "ex-1", status: "ok", at_ms: T0 }]);
    expect(released).toEqual(["ex-1"]);
    expect(benches.get("s1")!.idle).toBe(true);
    expect(benches.get("s1")!.live).toBeNull();
  });

  it("runs in the root session by default, under the caller's id when given", async () => {
    const report = await cells().execute("1", undefined, { executionId: "mine", origin: "mcp" });
    expect(report).toMatchObject({ id: "mine", session_id: "root", status: "ok" });
    expect(getExecution(db, "mine")!.origin).toBe("mcp");
    // The id is used now: a second cell with it is refused before anything runs.
    await expect(cells().execute("1", "root", { executionId: "mine" })).rejects.toMatchObject({ code: "EXECUTION_ID_IN_USE" });
  });

  it("refuses an id queued already", async () => {
    const gate = deferred();
    nextScript = async () => (await gate.promise, ok());
    const c = cells();
    const first = c.execute("1", "s", { executionId: "dup" });
    await turn();
    await expect(c.execute("2", "s", { executionId: "dup" })).rejects.toMatchObject({ code: "EXECUTION_ID_IN_USE", message: 'execution id "dup" is already used' });
    gate.resolve();
    await first;
  });

  it("runs a session's cells one at a time, in arrival order", async () => {
    const order: string[] = [];
    const gates = [deferred(), deferred()];
    let n = 0;
    nextScript = async (code) => {
      order.push(`start ${code}`);
      await gates[n++]!.promise;
      order.push(`end ${code}`);
      return ok();
    };
    const c = cells();
    const a = c.execute("a", "s");
    const b = c.execute("b", "s");
    for (let i = 0; i < 10; i++) await turn();
    expect(order).toEqual(["start a"]);
    gates[0]!.resolve();
    await a;
    for (let i = 0; i < 10 && order.length < 3; i++) await turn();
    expect(order).toEqual(["start a", "end a", "start b"]);
    gates[1]!.resolve();
    await b;
  });

  it("refuses a stopped session, also one stopped while its cell queued", async () => {
    closed.add("gone");
    await expect(cells().execute("1", "gone")).rejects.toMatchObject({ code: "SESSION_STOPPED" });
    expect(benches.has("gone")).toBe(false);
    const gate = deferred();
    const running = deferred();
    nextScript = async () => (running.resolve(), await gate.promise, ok());
    const c = cells();
    const first = c.execute("1", "s");
    await running.promise;
    const second = c.execute("2", "s");
    closed.add("s");
    gate.resolve();
    await first;
    await expect(second).rejects.toMatchObject({ code: "SESSION_STOPPED" });
    expect(benches.get("s")!.idle).toBe(true);
  });

  it("refuses an oversize cell with a durable incident, before any workbench starts", async () => {
    await expect(cells().execute("x".repeat(262_145), "s")).rejects.toMatchObject({ code: "CELL_TOO_LARGE" });
    expect(db.select().from(incidents).all()[0]!.detail).toMatchObject({ reason: "cell_too_large", session_id: "s", bytes: 262_145 });
    expect(incidentKinds()).toEqual(["cell.refused"]);
    expect(benches.size).toBe(0);
    // At the limit it runs.
    await expect(cells().execute("x".repeat(262_144), "s")).resolves.toMatchObject({ status: "ok" });
  });

  it("restarts a dead worker before the cell, with the reason culling left (else worker_died)", async () => {
    const c = cells();
    await c.execute("1", "s");
    const bench = benches.get("s")!;
    (bench.worker as unknown as Stand).state = "dead";
    await c.execute("2", "s");
    bench.endedFor = "idle_culled";
    (bench.worker as unknown as Stand).state = "dead";
    const report = await c.execute("3", "s");
    bench.worker = null;
    await c.execute("4", "s");
    expect(restarts).toEqual([
      ["s", "session_start"],
      ["s", "worker_died"],
      ["s", "idle_culled"],
      ["s", "worker_died"],
    ]);
    expect(report.generation).toBe("g-3");
  });

  it("restarts a worker that died in the cell, after the record is closed, with the limit it named", async () => {
    const c = cells();
    await c.execute("warm", "s");
    const bench = benches.get("s")!;
    restarts.length = 0;
    (bench.worker as unknown as Stand).script = async () => {
      (bench.worker as unknown as Stand).state = "dead";
      return { kind: "failed", error: "killed", endedBy: "invalidated", reason: "memory_limit", exit: { code: null, signal: "SIGKILL" }, tails: { stderr: "oom" } };
    };
    const report = await c.execute("boom", "s");
    expect(report).toMatchObject({ status: "failed", failure: { reason: "memory_limit", stderr_tail: "oom" } });
    expect(restarts).toEqual([["s", "memory_limit"]]);
    // Another death names its status.
    (bench.worker as unknown as Stand).script = async () => (((bench.worker as unknown as Stand).state = "dead"), ok());
    await c.execute("exit", "s");
    expect(restarts).toEqual([["s", "memory_limit"], ["s", "after_ok"]]);
  });

  it("does not restart after a death while the host stops or once the session is closed; a failed restart keeps the report", async () => {
    const c = cells();
    await c.execute("1", "s");
    const bench = benches.get("s")!;
    const stand = () => bench.worker as unknown as Stand;
    const dieIn = (extra: () => void = () => undefined) => (stand().script = async () => (extra(), (stand().state = "dead"), ok()));
    restarts.length = 0;
    stopping = true;
    dieIn();
    await c.execute("2", "s");
    expect(restarts).toEqual([]);
    stopping = false;
    await c.execute("3", "s"); // the dead worker is restarted before this cell
    expect(restarts).toEqual([["s", "worker_died"]]);
    dieIn(() => closed.add("s"));
    await c.execute("4", "s");
    expect(restarts).toEqual([["s", "worker_died"]]);
    closed.delete("s");
    await c.execute("5", "s");
    restarts.length = 0;
    dieIn(() => (restartFails = new Error("no python")));
    const report = await c.execute("6", "s");
    expect(report.status).toBe("ok");
    expect(restarts).toEqual([["s", "after_ok"]]);
    expect(incidentKinds()).toEqual(["workbench.restart_failed"]);
  });

  it("a cell the worker refuses is closed as failed, not left running", async () => {
    nextScript = async () => Promise.reject(Object.assign(new Error("queue full"), { code: "WORKER_BUSY" }));
    const report = await cells().execute("1", "s");
    expect(report).toMatchObject({ status: "failed", ended_by: "refused", failure: { reason: "WORKER_BUSY" } });
    expect(released).toEqual(["ex-1"]);
  });

  it("stores the displays the cell shows and reports them in order (C20)", async () => {
    nextScript = async (_code, opts) => {
      const show = (opts as { onDisplay?: (d: unknown) => void }).onDisplay!;
      show({ data: { "text/plain": "first" }, metadata: {} });
      show({ data: { "text/markdown": "**second**", "text/plain": "second" }, metadata: {} });
      return ok();
    };
    const report = await cells().execute("display('first'); display('second')", "s");
    expect(report.displays.map((d) => [d.seq, d.text])).toEqual([
      [0, "first"],
      [1, "**second**"],
    ]);
    expect(report.displays_dropped).toBe(0);
  });

  it("hands the cell's output listener from the live output hub, in order with its displays", async () => {
    const seen: unknown[] = [];
    const heard: unknown[] = [];
    // The worker's output during the cell reaches the hub's listener (through the cell's display order, idle here: at once).
    nextScript = async (_code, opts) => ((opts as unknown as { onOutput: (o: unknown) => void }).onOutput({ stream: "stdout", text: "hi" }), ok());
    const listener = (o: unknown) => void heard.push(o);
    await cells({ forExecution: (live: LiveExecution) => (seen.push(live.id), listener) }).execute("1", "s");
    expect(seen).toEqual(["ex-1"]);
    expect(heard).toEqual([{ stream: "stdout", text: "hi" }]);
  });
});

describe("Cells.execute edges", () => {
  it("a first generation that cannot start fails the cell with its own error, and frees the id", async () => {
    restartFails = new Error("no python");
    const c = cells();
    await expect(c.execute("1", "s", { executionId: "x" })).rejects.toThrow("no python");
    expect(await c.interrupt({ executionId: "x" })).toEqual({ rung: "not_running" });
  });

  it("an id refused while queued (the session stopped) is not left queued", async () => {
    const gate = deferred();
    const running = deferred();
    nextScript = async () => (running.resolve(), await gate.promise, ok());
    const c = cells();
    const first = c.execute("1", "s");
    await running.promise;
    const second = c.execute("2", "s", { executionId: "q" });
    closed.add("s");
    gate.resolve();
    await first;
    await expect(second).rejects.toMatchObject({ code: "SESSION_STOPPED" });
    expect(await c.interrupt({ executionId: "q" })).toEqual({ rung: "not_running" });
  });

  it("a queued cell interrupted before its turn does not restart a dead worker for nothing, and keeps its origin", async () => {
    const gate = deferred();
    const running = deferred();
    nextScript = async () => (running.resolve(), await gate.promise, ok());
    const c = cells();
    const first = c.execute("1", "s");
    await running.promise;
    const queued = c.execute("2", "s", { executionId: "q", origin: "web" });
    await turn();
    await c.interrupt({ executionId: "q" });
    // The first cell's worker dies and its restart fails: the worker is still dead at the queued turn.
    (benches.get("s")!.worker as unknown as Stand).state = "dead";
    restartFails = new Error("no python");
    gate.resolve();
    await first;
    expect(await queued).toMatchObject({ status: "interrupted", ended_by: "before_start" });
    expect(restarts).toEqual([["s", "session_start"], ["s", "after_ok"]]);
    expect(getExecution(db, "q")!.origin).toBe("web");
  });

  it("incidents say what happened", async () => {
    const c = cells();
    await c.execute("1", "s");
    const bench = benches.get("s")!;
    const stand = bench.worker as unknown as Stand;
    stand.script = async () => ((restartFails = new Error("no python")), (stand.state = "dead"), ok());
    await c.execute("2", "s", { executionId: "dies" });
    const detail = db.select().from(incidents).all()[0]!;
    expect(detail).toMatchObject({ kind: "workbench.restart_failed", detail: { session_id: "s", after: "dies", error: "no python" }, atMs: T0 });
  });
});

describe("Cells.interrupt", () => {
  it("interrupts the running cell by its id or by its session (root by default)", async () => {
    const gate = deferred();
    nextScript = async () => (await gate.promise, ok());
    const c = cells();
    const a = c.execute("1", "s", { executionId: "a" });
    const r = c.execute("1", "root", { executionId: "r" });
    for (let i = 0; i < 10; i++) await turn();
    expect(await c.interrupt({ executionId: "a" })).toEqual({ execution_id: "a", rung: "message" });
    expect(await c.interrupt({ sessionId: "s" })).toEqual({ execution_id: "a", rung: "message" });
    expect(await c.interrupt({})).toEqual({ execution_id: "r", rung: "message" });
    expect((benches.get("s")!.worker as unknown as Stand).interrupts).toEqual(["a", "a"]);
    expect(await c.interrupt({ executionId: "nope" })).toEqual({ rung: "not_running" });
    expect(await c.interrupt({ sessionId: "nope" })).toEqual({ rung: "not_running" });
    gate.resolve();
    await Promise.all([a, r]);
    expect(await c.interrupt({ executionId: "a" })).toEqual({ rung: "not_running" });
  });

  it("a queued cell interrupted before its turn is recorded interrupted and never runs", async () => {
    const gate = deferred();
    const ran: string[] = [];
    nextScript = async (code) => (ran.push(code), await gate.promise, ok());
    const c = cells();
    const first = c.execute("first", "s", { executionId: "one" });
    for (let i = 0; i < 10; i++) await turn();
    const queued = c.execute("second", "s", { executionId: "two" });
    await turn();
    expect(await c.interrupt({ executionId: "two" })).toEqual({ execution_id: "two", rung: "before_start" });
    // Asked twice: still queued-and-cancelled, not running.
    expect(await c.interrupt({ executionId: "two" })).toEqual({ rung: "not_running" });
    gate.resolve();
    await first;
    const report = await queued;
    expect(report).toMatchObject({ id: "two", status: "interrupted", ended_by: "before_start", error: "interrupted while queued; the cell never ran", generation: "g-1" });
    expect(getExecution(db, "two")).toMatchObject({ code: "second", origin: "exec" });
    expect(ran).toEqual(["first"]);
    expect(notes.at(-1)).toEqual({ type: "execution", session_id: "s", execution_id: "two", status: "interrupted", at_ms: T0 });
    // The id is used: it cannot be queued again.
    await expect(c.execute("x", "s", { executionId: "two" })).rejects.toMatchObject({ code: "EXECUTION_ID_IN_USE" });
  });

  it("a queued cell interrupted while the session has no worker at all is recorded under generation none", async () => {
    const c = cells();
    restartFails = new Error("no python");
    await expect(c.execute("first", "s")).rejects.toThrow("no python");
    // The next cell's restart holds the slot, then fails too: the interrupted cell's turn finds no worker.
    const started = deferred();
    const finish = deferred();
    const deps = (c as unknown as { deps: { workbenches: { restart: (b: Workbench, r: string) => Promise<void> } } }).deps;
    const restart = deps.workbenches.restart;
    deps.workbenches.restart = async (b, r) => (started.resolve(), await finish.promise, restart(b, r));
    const second = c.execute("second", "s");
    await started.promise;
    const queued = c.execute("third", "s", { executionId: "three" });
    await turn();
    expect(await c.interrupt({ executionId: "three" })).toEqual({ execution_id: "three", rung: "before_start" });
    finish.resolve();
    await expect(second).rejects.toThrow("no python");
    expect(await queued).toMatchObject({ id: "three", status: "interrupted", ended_by: "before_start", generation: "none" });
  });

  it("a cell interrupted while the restart before it ran never runs", async () => {
    const c = cells();
    await c.execute("1", "s");
    const bench = benches.get("s")!;
    (bench.worker as unknown as Stand).state = "dead";
    const started = deferred();
    const finish = deferred();
    restartFails = null;
    const deps = (c as unknown as { deps: { workbenches: { restart: (b: Workbench, r: string) => Promise<void> } } }).deps;
    const restart = deps.workbenches.restart;
    deps.workbenches.restart = async (b, r) => (started.resolve(), await finish.promise, restart(b, r));
    const cell = c.execute("2", "s", { executionId: "late" });
    await started.promise;
    expect(await c.interrupt({ executionId: "late" })).toEqual({ execution_id: "late", rung: "before_start" });
    finish.resolve();
    expect(await cell).toMatchObject({ status: "interrupted", ended_by: "before_start", generation: "g-2" });
  });
  it("a cell interrupted while its execution row is being written (a store that answers later) never runs", async () => {
    const ran: string[] = [];
    nextScript = async (code) => (ran.push(code), ok());
    const c = cells();
    const store = (c as unknown as { deps: { store: { startExecution: (...a: unknown[]) => Promise<void> } } }).deps.store;
    const write = store.startExecution.bind(store);
    const writing = deferred();
    const finish = deferred();
    store.startExecution = async (...a: unknown[]) => (writing.resolve(), await finish.promise, write(...a));
    const cell = c.execute("print('never')", "s", { executionId: "gap" });
    await writing.promise;
    expect(await c.interrupt({ executionId: "gap" })).toEqual({ execution_id: "gap", rung: "before_start" });
    finish.resolve();
    expect(await cell).toMatchObject({ id: "gap", status: "interrupted", ended_by: "before_start", generation: "g-1" });
    expect(ran).toEqual([]);
    expect(getExecution(db, "gap")).toMatchObject({ code: "print('never')", status: "interrupted" });
  });
});

describe("Cells host requests", () => {
  async function request(req: HostRequest, opts: { executionId?: (live: string) => string } = {}): Promise<{ value?: unknown; error?: unknown }> {
    let result: { value?: unknown; error?: unknown } = {};
    nextScript = async (_code, o) => {
      const controller = new AbortController();
      try {
        result = { value: await o.onHostRequest(req, { executionId: opts.executionId?.(o.id) ?? o.id, requestId: "rq-1", signal: controller.signal }) };
      } catch (error) {
        result = { error };
      }
      return ok();
    };
    await cells().execute("1", "s");
    return result;
  }

  it("serves a request of the live cell through its handler, logged first", async () => {
    const observed: string[] = [];
    observe = (s) => void observed.push(s);
    const result = await request({ method: "runtime.inspect" } as HostRequest);
    expect(result).toEqual({ value: { inspected: "s" } });
    expect(opened).toEqual([["s", "ex-1", "rq-1", { method: "runtime.inspect" }]]);
    expect(observed).toEqual(["s"]);
  });

  it("refuses a request from any other execution (scope_expired)", async () => {
    const result = await request({ method: "runtime.inspect" } as HostRequest, { executionId: () => "ex-other" });
    expect(result.error).toMatchObject({ code: "scope_expired", message: "execution ex-other is not the live foreground cell of this generation" });
    expect(incidentKinds()).toEqual([]);
  });

  it("a header that cannot be observed costs the request nothing; the incident says why", async () => {
    observe = () => {
      throw new Error("damaged chain");
    };
    const result = await request({ method: "runtime.inspect" } as HostRequest);
    expect(result).toEqual({ value: { inspected: "s" } });
    expect(incidentKinds()).toEqual(["header.observe_failed"]);
    expect(db.select().from(incidents).all()[0]!.detail).toEqual({ session_id: "s", error: "Error: damaged chain" });
  });

  it("an unknown method is the handler's reply error, not an internal one", async () => {
    const result = await request({ method: "nope.nothing" } as unknown as HostRequest);
    expect(result.error).toMatchObject({ code: "invalid_request" });
    expect(incidentKinds()).toEqual([]);
  });

  it("a handler's own failure is `internal`, with an incident", async () => {
    services = () => {
      throw new Error("services broke");
    };
    const result = await request({ method: "runtime.inspect" } as HostRequest);
    expect(result.error).toMatchObject({ code: "internal", message: "services broke" });
    expect(incidentKinds()).toEqual(["request.internal_error"]);
    expect(db.select().from(incidents).all()[0]!.detail).toEqual({ method: "runtime.inspect", error: "Error: services broke" });
  });
});
