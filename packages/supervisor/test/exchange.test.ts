import { describe, expect, it } from "vitest";
import type { HostRequest, WorkerCellCompletion } from "../src/index.js";
import { sleep, startFake, waitFor } from "./helpers.js";

function resultText(done: unknown): string {
  const cell = done as WorkerCellCompletion;
  expect(cell.kind).toBe("cell");
  return cell.output.map((r) => r.text).join("");
}

describe("host requests (fake worker)", () => {
  it.each(["late", "late-same-chunk"])(
    "a reply that arrives after the execution ended is never sent, and its handler sees the abort (%s)",
    async (code) => {
      const worker = await startFake("requests");
      let abortedAtStart: boolean | undefined;
      let lateSignal: AbortSignal | undefined;
      let lateSettled!: () => void;
      const late = new Promise<void>((r) => (lateSettled = r));
      const done = await worker.execute(code, {
        onHostRequest: async (_req: HostRequest, ctx) => {
          if (ctx.requestId === "r1") return { effect_id: "e1" };
          lateSignal = ctx.signal;
          // A handler starts while its cell runs, even when the completion was read in the same chunk.
          abortedAtStart = ctx.signal.aborted;
          // Answer only once the execution has ended: ordering, not a sleep, makes this reply late.
          if (!ctx.signal.aborted) await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          lateSettled();
          return { effect_id: "e2" };
        },
      });
      expect(done).toMatchObject({ status: "ok", endedBy: "worker" });
      await late;
      expect(abortedAtStart).toBe(false);
      expect(lateSignal?.aborted).toBe(true);
      // stderr is read apart from the socket: wait for the line that must come, then a moment for one that must not.
      expect(await waitFor(() => worker.stderrTail.includes("recv host_reply r1"))).toBe(true);
      await sleep(100);
      expect(worker.stderrTail).not.toContain("recv host_reply r2");
      expect(worker.state).toBe("ready");
      await worker.shutdown();
    },
  );

  it("the 129th and later requests of one cell are refused with limit_exceeded", async () => {
    const worker = await startFake("requests");
    let handled = 0;
    const done = await worker.execute("many:130", {
      onHostRequest: () => {
        handled += 1;
        return { now_ms: 0 };
      },
    });
    const kinds = JSON.parse(resultText(done)) as string[];
    expect(kinds.filter((k) => k === "ok")).toHaveLength(128);
    expect(kinds.filter((k) => k === "limit_exceeded")).toHaveLength(2);
    expect(handled).toBe(128);
    // The count is per cell: the next cell starts again from zero.
    const next = await worker.execute("many:3", { onHostRequest: () => ({}) });
    expect(JSON.parse(resultText(next))).toEqual(["ok", "ok", "ok"]);
    await worker.shutdown();
  });

  it("handler results and errors become ok and snake_case error replies, concurrently and by id", async () => {
    const worker = await startFake("requests");
    const done = await worker.execute("many:4", {
      onHostRequest: async (_req, ctx) => {
        const n = Number(ctx.requestId.slice(1));
        await sleep(40 - n * 10); // answer in reverse order
        if (n === 1) throw Object.assign(new Error("nope"), { code: "not_found" });
        if (n === 2) throw Object.assign(new Error("weird"), { code: "NotSnake" });
        return { n };
      },
    });
    expect(JSON.parse(resultText(done)).sort()).toEqual(["internal", "not_found", "ok", "ok"]);
    await worker.shutdown();
  });

  it("a request for an unknown execution gets scope_expired, unless the host overrides it", async () => {
    const worker = await startFake("requests");
    const reply = JSON.parse(resultText(await worker.execute("stray")));
    expect(reply).toMatchObject({ kind: "host_reply", id: "s1", execution_id: "ghost", reply: { kind: "error", code: "scope_expired" } });
    await worker.shutdown();

    const overriding = await startFake("requests", { onStrayHostRequest: (req, ctx) => ({ seen: ctx.executionId, req }) });
    const ok = JSON.parse(resultText(await overriding.execute("stray")));
    expect(ok.reply).toEqual({ kind: "ok", value: { seen: "ghost", req: { method: "runtime.inspect" } } });
    await overriding.shutdown();
  });

  it("after an accepted runtime.wait, later requests of that execution are refused", async () => {
    const worker = await startFake("requests");
    const methods: string[] = [];
    const done = await worker.execute("yield", {
      onHostRequest: (req) => {
        methods.push(req.method);
        return { wait_id: "w-1", deadline_ms: null, pending_input: false };
      },
    });
    expect(done).toMatchObject({ kind: "cell", status: "yielded" });
    expect(resultText(done)).toBe('["ok","scope_expired"]');
    expect(methods).toEqual(["runtime.wait"]);
    await worker.shutdown();
  });

  it("one foreground cell at a time: a second execute is WORKER_BUSY", async () => {
    const worker = await startFake("requests", { interruptGraceMs: 10_000 });
    const first = worker.execute("ladder:1");
    await expect(worker.execute("x")).rejects.toMatchObject({ code: "WORKER_BUSY", retryable: true });
    expect(worker.state).toBe("busy");
    const out = await worker.interrupt("c-1");
    expect(out.rung).toBe("message");
    expect(await first).toMatchObject({ status: "interrupted", endedBy: "message" });
    await worker.shutdown();
  });

  it("raw stdout floods are drained into a bounded tail without blocking the worker", async () => {
    const worker = await startFake("requests");
    const before = process.memoryUsage().rss;
    const done = await worker.execute("flood:200");
    const growth = process.memoryUsage().rss - before;
    expect(resultText(done)).toBe("flooded");
    expect(worker.stdoutTail).toHaveLength(8192);
    expect(worker.stdoutTail).toBe("x".repeat(8192));
    expect(growth).toBeLessThan(64 * 1024 * 1024);
    await worker.shutdown();
  });
});

describe("interrupt ladder (fake worker)", () => {
  // A grace the expected rung must beat is long (a loaded CI box may take seconds); a grace that
  // must run out is short (load only makes it run out later, never sooner).
  const LONG = 10_000; // under the 20 s test timeout, so a missed rung fails as a wrong rung, not a timeout
  const SHORT = 150;
  const graces = { interruptGraceMs: SHORT, sigintGraceMs: SHORT };

  it("rung 1: the interrupt message", async () => {
    const worker = await startFake("requests", { interruptGraceMs: LONG, sigintGraceMs: SHORT });
    const cell = worker.execute("ladder:1", { id: "L1" });
    expect(await worker.interrupt("L1")).toMatchObject({ rung: "message" });
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", endedBy: "message", source: "worker" });
    expect(worker.state).toBe("ready");
    await worker.shutdown();
  });

  it("rung 2: SIGINT when the message is ignored", async () => {
    const worker = await startFake("requests", { interruptGraceMs: SHORT, sigintGraceMs: LONG });
    const cell = worker.execute("ladder:2", { id: "L2" });
    expect(await worker.interrupt("L2")).toMatchObject({ rung: "sigint" });
    expect(await cell).toMatchObject({ status: "interrupted", endedBy: "sigint", source: "worker" });
    await worker.shutdown();
  });

  it("rung 3: hard stop when both are ignored; the namespace is gone", async () => {
    const worker = await startFake("requests", graces);
    const cell = worker.execute("ladder:3", { id: "L3" });
    const outcome = await worker.interrupt("L3");
    expect(outcome.rung).toBe("hard_stop");
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", source: "host", rung: "hard_stop", endedBy: "hard_stop", reason: "interrupt_escalated" });
    expect(worker.state).toBe("dead");
  });

  it("a hard stop during the ladder's first grace is reported as the rung that ended it", async () => {
    const worker = await startFake("requests", { interruptGraceMs: 5000 });
    const cell = worker.execute("ladder:3", { id: "L4" });
    const outcome = worker.interrupt("L4");
    await worker.hardStop("operator_stop");
    expect(await outcome).toMatchObject({ rung: "hard_stop", completion: { reason: "operator_stop" } });
    expect(await cell).toMatchObject({ status: "interrupted", endedBy: "hard_stop" });
  });

  it("an abort signal runs the ladder; interrupting what is not running reports not_running", async () => {
    const worker = await startFake("requests", { interruptGraceMs: LONG, sigintGraceMs: SHORT });
    expect(await worker.interrupt("nothing")).toEqual({ rung: "not_running" });
    const ac = new AbortController();
    const cell = worker.execute("ladder:1", { signal: ac.signal });
    ac.abort();
    expect(await cell).toMatchObject({ status: "interrupted", endedBy: "message" });
    await worker.shutdown();
  });

  it("a cell the worker completes while shutting down keeps the worker's record", async () => {
    const worker = await startFake("requests", { env: { FAKE_GRACEFUL: "1" } });
    const cell = worker.execute("ladder:3");
    const exit = await worker.shutdown();
    expect(exit).toMatchObject({ code: 0, reason: "shutdown" });
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: "shutdown" });
  });

  it("a host request that arrives while shutting down is not handled (its reply could not be sent)", async () => {
    const worker = await startFake("requests", { env: { FAKE_GRACEFUL: "1", FAKE_REQUEST_ON_SHUTDOWN: "1" } });
    const methods: string[] = [];
    const cell = worker.execute("ladder:3", { onHostRequest: (req) => void methods.push(req.method) });
    await worker.shutdown();
    // The request was framed before the completion, so it was read before the cell settled.
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", source: "worker", endedBy: "shutdown" });
    expect(await waitFor(() => worker.stderrTail.includes("recv shutdown"))).toBe(true);
    expect(methods).toEqual([]);
  });

  it("a cell still running when a worker exits on shutdown is recorded as interrupted by the host", async () => {
    const worker = await startFake("requests");
    const cell = worker.execute("ladder:3");
    await worker.shutdown();
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", source: "host", endedBy: "shutdown", reason: "shutdown" });
  });

  it("shutdown of a worker that ignores it escalates to a kill after the grace", async () => {
    const worker = await startFake("requests", { shutdownGraceMs: 200, env: { FAKE_IGNORE_SHUTDOWN: "1" } });
    const exit = await worker.shutdown();
    expect(exit).toMatchObject({ reason: "shutdown_timeout", signal: "SIGKILL" });
  });
});
