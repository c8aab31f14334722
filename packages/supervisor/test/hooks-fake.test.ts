import { describe, expect, it, vi } from "vitest";
import { startFake } from "./helpers.js";

const review = (text: string) => ({ effect_id: "e-1", destination: "operator" as const, text });

describe("invoke (fake hooks worker)", () => {
  it("returns validated decisions for both slots", async () => {
    const worker = await startFake("hooks", { role: "hooks" });
    expect(await worker.invoke("delivery.review", review("allow"))).toMatchObject({ kind: "hook", value: { action: "allow" }, source: "worker", endedBy: "worker" });
    expect(await worker.invoke("delivery.review", review("too loud"))).toMatchObject({ kind: "hook", value: { action: "hold", reason: "too loud" } });
    expect(await worker.invoke("attention.plan", { event_id: 1, source: "operator", received_at_ms: 0 })).toMatchObject({
      kind: "hook",
      value: { action: "wake", priority: 7 },
    });
    await worker.shutdown();
  });

  it("a value of the wrong slot is invalid_result; a worker failure is worker_failed; the worker lives on", async () => {
    const worker = await startFake("hooks", { role: "hooks" });
    expect(await worker.invoke("delivery.review", review("bad"))).toMatchObject({ kind: "failed", reason: "invalid_result", source: "worker" });
    expect(await worker.invoke("delivery.review", review("fail"))).toMatchObject({ kind: "failed", reason: "worker_failed", error: "handler raised ValueError" });
    expect(worker.state).toBe("ready");
    expect(await worker.invoke("delivery.review", review("allow"))).toMatchObject({ kind: "hook" });
    await worker.shutdown();
  });

  it("an input that is not the slot's typed input fails without reaching the worker", async () => {
    const worker = await startFake("hooks", { role: "hooks" });
    const done = await worker.invoke("attention.plan", { event_id: 0, source: "operator", received_at_ms: 0 });
    expect(done).toMatchObject({ kind: "failed", reason: "invalid_input", source: "host", endedBy: "refused" });
    expect(worker.stderrTail).not.toContain("recv invoke");
    await worker.shutdown();
  });

  it("an overrun invalidates the generation and fails every pending invoke", async () => {
    const worker = await startFake("hooks", { role: "hooks", invokeBudgetMs: 300 });
    const hung = worker.invoke("delivery.review", review("hang"));
    const queued = worker.invoke("delivery.review", review("allow"));
    expect(await hung).toMatchObject({ kind: "failed", reason: "hook_timeout", source: "host", endedBy: "invalidated" });
    expect(await queued).toMatchObject({ kind: "failed", reason: "hook_timeout" });
    expect(await worker.exited).toMatchObject({ reason: "hook_timeout" });
    expect(await worker.invoke("delivery.review", review("allow"))).toMatchObject({ kind: "failed", reason: "worker_dead", endedBy: "refused" });
  });

  it("the budget counts the wait in the queue", async () => {
    // The second call alone would fit the budget (1700 < 3000 ms), not after waiting behind the
    // first (1500 + 1700 > 3000). Load only delays both, keeping the second over budget; the
    // first has 1.5 s of margin.
    const worker = await startFake("hooks", { role: "hooks", invokeBudgetMs: 3000 });
    const first = worker.invoke("delivery.review", review("slow:1500"));
    const second = worker.invoke("delivery.review", review("slow:1700"));
    expect(await first).toMatchObject({ kind: "hook" });
    expect(await second).toMatchObject({ kind: "failed", reason: "hook_timeout" });
  });

  it("the budget is kept on a monotonic clock: a wall-clock jump does not expire a queued call", async () => {
    const worker = await startFake("hooks", { role: "hooks", invokeBudgetMs: 30_000 });
    const first = worker.invoke("delivery.review", review("slow:200"));
    const second = worker.invoke("delivery.review", review("allow"));
    const now = Date.now();
    const jump = vi.spyOn(Date, "now").mockImplementation(() => now + 3_600_000);
    try {
      expect(await first).toMatchObject({ kind: "hook" });
      expect(await second).toMatchObject({ kind: "hook", value: { action: "allow" } });
    } finally {
      jump.mockRestore();
    }
    await worker.shutdown();
  });

  it("a full queue fails at once with queue_full", async () => {
    const worker = await startFake("hooks", { role: "hooks", invokeQueueLimit: 2, invokeBudgetMs: 5000 });
    const pending = [0, 1, 2].map(() => worker.invoke("delivery.review", review("slow:100")));
    const refused = await worker.invoke("delivery.review", review("allow"));
    expect(refused).toMatchObject({ kind: "failed", reason: "queue_full", endedBy: "refused" });
    for (const p of await Promise.all(pending)) expect(p.kind).toBe("hook");
    await worker.shutdown();
  });

  it("execute on a hooks worker and invoke on a workbench are WORKER_WRONG_ROLE", async () => {
    const hooks = await startFake("hooks", { role: "hooks" });
    await expect(hooks.execute("1")).rejects.toMatchObject({ code: "WORKER_WRONG_ROLE" });
    await hooks.shutdown();
    const bench = await startFake("requests");
    await expect(bench.invoke("delivery.review", review("x"))).rejects.toMatchObject({ code: "WORKER_WRONG_ROLE" });
    await bench.shutdown();
  });
});
