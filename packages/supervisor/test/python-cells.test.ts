import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CellCompletion, Worker, WorkerCellCompletion } from "../src/index.js";
import { sleep, startPython } from "./helpers.js";

function cell(done: CellCompletion): WorkerCellCompletion {
  if (done.kind !== "cell" || done.source !== "worker") throw new Error(`expected a worker cell result, got ${JSON.stringify(done)}`);
  return done;
}

const result = (done: CellCompletion) => cell(done).output.filter((r) => r.stream === "result").map((r) => r.text).join("");
const stream = (done: CellCompletion, name: string) => cell(done).output.filter((r) => r.stream === name).map((r) => r.text).join("");

describe("the real Python workbench", () => {
  let worker: Worker;
  beforeAll(async () => {
    worker = await startPython();
  });
  afterAll(async () => {
    await worker?.shutdown();
  });

  it("keeps one namespace across cells, and _ keeps the last non-None value", async () => {
    expect(result(await worker.execute("x = 41\nx + 1"))).toBe("42");
    expect(result(await worker.execute("x * 2"))).toBe("82");
    expect(result(await worker.execute("None"))).toBe("");
    expect(result(await worker.execute("_ + 1"))).toBe("83");
  });

  it("runs top-level await", async () => {
    const done = await worker.execute("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'");
    expect(cell(done).status).toBe("ok");
    expect(result(done)).toBe("'awaited'");
  });

  it("cuts output at 65,536 bytes and counts the rest exactly in truncated_bytes", async () => {
    const done = cell(await worker.execute("print('é' * 40000)"));
    const kept = done.output.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
    expect(kept).toBeLessThanOrEqual(65536);
    expect(kept + done.truncated_bytes).toBe(80001);
    expect(done.truncated_bytes).toBeGreaterThan(0);
  });

  it("keeps at most 256 records, counting what it drops", async () => {
    const done = cell(await worker.execute("import sys\nfor i in range(300):\n    print('x', file=sys.stderr if i % 2 else sys.stdout)"));
    expect(done.output.length).toBeLessThanOrEqual(256);
    const kept = done.output.reduce((n, r) => n + Buffer.byteLength(r.text), 0);
    expect(kept + done.truncated_bytes).toBe(600);
  });

  it("an exception gives status error with its traceback", async () => {
    const done = cell(await worker.execute("def f():\n    raise ValueError('bad 7')\nf()"));
    expect(done.status).toBe("error");
    expect(done.error).toContain("Traceback");
    expect(done.error).toContain("ValueError: bad 7");
    expect(result(await worker.execute("x"))).toBe("41");
  });

  it("answers concurrent host requests by id, whatever order the replies come in", async () => {
    const done = await worker.execute(
      "import asyncio\nr = await asyncio.gather(*(runtime.send(str(i)) for i in range(5)))\n[v['echo'] for v in r]",
      {
        onHostRequest: async (req) => {
          if (req.method !== "local.send") throw new Error(`unexpected ${req.method}`);
          await sleep(60 - Number(req.text) * 12);
          return { echo: req.text };
        },
      },
    );
    expect(result(done)).toBe("['0', '1', '2', '3', '4']");
  });

  it("refuses the 129th request of a cell", async () => {
    let handled = 0;
    const done = await worker.execute(
      "errs = []\nfor i in range(130):\n    try:\n        await runtime.send(str(i))\n    except Exception as e:\n        errs.append(getattr(e, 'code', type(e).__name__))\nerrs",
      {
        onHostRequest: () => {
          handled += 1;
          return { ok: true };
        },
      },
    );
    expect(result(done)).toBe("['limit_exceeded', 'limit_exceeded']");
    expect(handled).toBe(128);
  });

  it("an error reply raises in the cell with its code", async () => {
    const done = await worker.execute("try:\n    await runtime.skills_load('nope')\nexcept Exception as e:\n    r = e.code\nr", {
      onHostRequest: () => {
        throw Object.assign(new Error("no skill nope"), { code: "not_found" });
      },
    });
    expect(result(done)).toBe("'not_found'");
  });

  it("a reply value too large for one frame becomes an internal error reply", async () => {
    const done = await worker.execute("try:\n    await runtime.send('x')\nexcept Exception as e:\n    r = (e.code, 'frame' in str(e).lower() or 'encoded' in str(e))\nr", {
      onHostRequest: () => ({ blob: "y".repeat(2_000_000) }),
    });
    expect(result(done)).toBe("('internal', True)");
  });

  it("a reply that comes after its cell ended is not sent and satisfies nothing later", async () => {
    let lateDone!: () => void;
    const late = new Promise<void>((r) => (lateDone = r));
    const first = await worker.execute("import asyncio\nt = asyncio.ensure_future(runtime.send('late'))\nawait asyncio.sleep(0.01)\n'left'", {
      onHostRequest: async (_req, ctx) => {
        // Answer only after the cell ended: ordered by the abort, not by a sleep the cell might outlast.
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
        lateDone();
        return { echo: "late" };
      },
    });
    expect(result(first)).toBe("'left'");
    const second = worker.execute("(await runtime.send('next'))['echo']", {
      onHostRequest: async (req) => {
        await late;
        await sleep(20);
        return { echo: req.method === "local.send" ? req.text : "?" };
      },
    });
    expect(result(await second)).toBe("'next'");
  });

  it("runtime.wait accepted by the host yields the cell and the code after it does not run", async () => {
    const accept = () => ({ wait_id: "w-1", deadline_ms: null, pending_input: false });
    const done = cell(await worker.execute("await runtime.wait(30, reason='input')\nprint('after')", { onHostRequest: accept }));
    expect(done.status).toBe("yielded");
    expect(stream(done, "stdout")).not.toContain("after");
    expect(result(await worker.execute("'still alive'"))).toBe("'still alive'");
  });

  it("catching the unwinding exception grants nothing: later requests of that cell are refused", async () => {
    const methods: string[] = [];
    const done = cell(
      await worker.execute("try:\n    await runtime.wait(30, reason='input')\nexcept BaseException:\n    pass\nawait runtime.send('sneaky')", {
        onHostRequest: (req) => {
          methods.push(req.method);
          return { wait_id: "w-2", deadline_ms: null, pending_input: false };
        },
      }),
    );
    expect(done.status).toBe("yielded");
    expect(methods).toEqual(["runtime.wait"]);
  });
});

describe("a cell that kills its worker", () => {
  it("os._exit fails the cell with worker_exited and the exit code", async () => {
    const worker = await startPython();
    const done = await worker.execute("import os\nos._exit(7)");
    expect(done).toMatchObject({ kind: "failed", source: "host", reason: "worker_exited", exit: { code: 7, signal: null }, endedBy: "invalidated" });
    expect(worker.state).toBe("dead");
  });
});

describe("what the host refuses to send", () => {
  it("a cell larger than 262,144 bytes is WORKER_INVALID_ARGUMENT and the worker stays usable", async () => {
    const worker = await startPython();
    await expect(worker.execute(`x = '${"a".repeat(262_144)}'`)).rejects.toMatchObject({ code: "WORKER_INVALID_ARGUMENT" });
    expect(worker.state).toBe("ready");
    expect(result(await worker.execute("1 + 1"))).toBe("2");
    await worker.shutdown();
  });
});
