import { spawn } from "node:child_process";
import { once } from "node:events";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CellCompletion } from "./completion.js";
import { climbLadder, interruptOnAbort, sigintWorker } from "./ladder.js";
import { Operation } from "./operation.js";
import { DEFAULTS } from "./options.js";
import { pin } from "./sandbox.js";

// The ladder's timing (C7) on vitest's fake clock: each rung waits exactly its grace before the
// next, never less; and where the SIGINT rung lands.
const done = (endedBy: string, status = "interrupted") => ({ kind: "cell", status, output: [], truncated_bytes: 0, error: null, endedBy }) as unknown as CellCompletion;

function scripted(grace = { interruptGraceMs: 1000, sigintGraceMs: 3000 }) {
  const op = new Operation<CellCompletion>("c-1");
  const sent: Array<[string, number]> = [];
  const t0 = Date.now();
  const details: string[] = [];
  const scope = {
    config: { ...DEFAULTS, ...grace },
    sendInterrupt: (id: string) => void sent.push([`message ${id}`, Date.now() - t0]),
    sigint: () => void sent.push(["sigint", Date.now() - t0]),
    hardStop: async (detail: string) => {
      sent.push(["hard_stop", Date.now() - t0]);
      details.push(detail);
      op.settle(done("hard_stop"));
    },
  };
  return { op, sent, details, scope };
}

describe("climbLadder timing", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("gives the message rung its grace, then SIGINT its own, then the hard stop", async () => {
    const l = scripted();
    const outcome = climbLadder(l.op, l.scope);
    expect(l.op.rung).toBe("message");
    await vi.advanceTimersByTimeAsync(999);
    expect(l.sent).toEqual([["message c-1", 0]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(l.sent).toEqual([["message c-1", 0], ["sigint", 1000]]);
    expect(l.op.rung).toBe("sigint");
    await vi.advanceTimersByTimeAsync(2999);
    expect(l.sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(l.sent).toEqual([["message c-1", 0], ["sigint", 1000], ["hard_stop", 4000]]);
    expect(l.details).toEqual(['operation "c-1" ignored interrupt and SIGINT']);
    expect(await outcome).toMatchObject({ rung: "hard_stop", completion: { endedBy: "hard_stop" } });
    expect(l.op.rung).toBe("hard_stop");
  });

  it("a hard stop from elsewhere while the message rung waits is the hard stop's, and no further rung is sent", async () => {
    const l = scripted();
    const outcome = climbLadder(l.op, l.scope);
    await vi.advanceTimersByTimeAsync(10);
    l.op.settle(done("hard_stop"));
    expect(await outcome).toMatchObject({ rung: "hard_stop" });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(l.sent.map(([r]) => r)).toEqual(["message c-1"]);
  });

  it("the rung in force when the cell ended is the one recorded (SIGINT), not the first", async () => {
    const l = scripted();
    const outcome = climbLadder(l.op, l.scope);
    await vi.advanceTimersByTimeAsync(1500);
    l.op.settle(done("sigint"));
    expect(await outcome).toEqual({ rung: "sigint", completion: done("sigint") });
  });

  it("an operation that already ended is answered at once with the message rung", async () => {
    const l = scripted();
    l.op.settle(done("message"));
    expect(await climbLadder(l.op, l.scope)).toEqual({ rung: "message", completion: done("message") });
    expect(l.sent.map(([r]) => r)).toEqual(["message c-1"]);
  });
});

describe("interruptOnAbort", () => {
  it("interrupts at once when the signal has aborted, else once when it aborts", () => {
    const op = new Operation<CellCompletion>("c-1");
    let calls = 0;
    const aborted = AbortSignal.abort();
    interruptOnAbort(aborted, op, () => calls++);
    expect(calls).toBe(1);
    const controller = new AbortController();
    interruptOnAbort(controller.signal, op, () => calls++);
    expect(calls).toBe(1);
    controller.abort();
    controller.abort();
    expect(calls).toBe(2);
  });

  it("stops listening once the operation settled", async () => {
    const op = new Operation<CellCompletion>("c-1");
    const controller = new AbortController();
    let calls = 0;
    interruptOnAbort(controller.signal, op, () => calls++);
    op.settle(done("worker", "ok"));
    await op.promise;
    await Promise.resolve();
    controller.abort();
    expect(calls).toBe(0);
  });
});

describe("sigintWorker", () => {
  it("a transport's control pipe gets `int`, and nothing is signalled", () => {
    const control = new PassThrough();
    const kill = vi.spyOn(process, "kill");
    sigintWorker({ control, exited: false, ns: undefined, inner: undefined, pid: process.pid });
    expect(control.read()?.toString()).toBe("int\n");
    expect(kill).not.toHaveBeenCalled();
    kill.mockRestore();
  });

  it("signals nothing once the exit was observed (the pid may be reused)", () => {
    const kill = vi.spyOn(process, "kill");
    sigintWorker({ control: undefined, exited: true, ns: undefined, inner: undefined, pid: process.pid });
    expect(kill).not.toHaveBeenCalled();
    kill.mockRestore();
  });

  /** A node child that exits with `code` on SIGINT; resolves once it listens. */
  async function child(code: number) {
    const c = spawn(process.execPath, ["-e", `process.on('SIGINT', () => process.exit(${code})); setInterval(() => {}, 1000); process.stdout.write('up')`], { stdio: ["ignore", "pipe", "ignore"] });
    await once(c.stdout, "data");
    return c;
  }

  for (const where of ["pid", "inner", "ns"] as const) {
    it(`sends SIGINT to the worker (${where}), not to the other processes it knows`, async () => {
      const worker = await child(42);
      const decoy = await child(43);
      try {
        const pinned = pin(worker.pid!)!;
        const other = pin(decoy.pid!)!;
        const target =
          where === "pid"
            ? { ns: undefined, inner: undefined, pid: worker.pid! }
            : where === "inner"
              ? { ns: undefined, inner: pinned, pid: decoy.pid! }
              : { ns: { init: other, worker: pinned }, inner: other, pid: decoy.pid! };
        const exit = once(worker, "exit");
        sigintWorker({ control: undefined, exited: false, ...target });
        expect((await exit)[0]).toBe(42);
        expect(decoy.exitCode).toBeNull();
        await new Promise((r) => setTimeout(r, 50));
        expect(decoy.exitCode).toBeNull();
      } finally {
        worker.kill("SIGKILL");
        decoy.kill("SIGKILL");
      }
    });
  }

  it("a pid that is gone is no error", () => {
    expect(() => sigintWorker({ control: undefined, exited: false, ns: undefined, inner: undefined, pid: 2 ** 22 + 12345 })).not.toThrow();
  });
});
