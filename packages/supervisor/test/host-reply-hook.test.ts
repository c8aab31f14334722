import { describe, expect, it } from "vitest";
import type { HostReplyEvent } from "../src/index.js";
import { startFake } from "./helpers.js";

function resultText(done: unknown): string {
  return (done as { output: Array<{ text: string }> }).output[0]!.text;
}

describe("onHostReply: the host is told every reply as it went out", () => {
  it("reports handled replies and the supervisor's own limit_exceeded refusals, with the raw request", async () => {
    const events: HostReplyEvent[] = [];
    const worker = await startFake("requests", { onHostReply: (e) => events.push(e) });
    const done = await worker.execute("many:130", { onHostRequest: () => ({ now_ms: 0 }) });
    expect(JSON.parse(resultText(done))).toHaveLength(130);
    expect(events).toHaveLength(130);
    const refused = events.filter((e) => !e.handled);
    expect(refused).toHaveLength(2);
    for (const e of refused) {
      expect(e).toMatchObject({ executionId: done.id, request: { method: "runtime.inspect" }, reply: { kind: "error", code: "limit_exceeded" }, sent: true });
    }
    expect(events.filter((e) => e.handled).every((e) => e.reply.kind === "ok" && e.sent)).toBe(true);
    await worker.shutdown();
  });

  it("reports the scope_expired refusal of a request after an accepted wait", async () => {
    const events: HostReplyEvent[] = [];
    const worker = await startFake("requests", { onHostReply: (e) => events.push(e) });
    await worker.execute("yield", { onHostRequest: () => ({ wait_id: "w-1", deadline_ms: null, pending_input: false }) });
    expect(events.map((e) => [e.requestId, e.handled, e.reply.kind === "ok" ? "ok" : e.reply.code])).toEqual([
      ["w1", true, "ok"],
      ["w2", false, "scope_expired"],
    ]);
    expect(events[1]!.request).toEqual({ method: "local.send", text: "after" });
    await worker.shutdown();
  });

  it("reports a stray request's refusal, and the internal error that replaced an unencodable value", async () => {
    const events: HostReplyEvent[] = [];
    const worker = await startFake("requests", { onHostReply: (e) => events.push(e) });
    await worker.execute("stray");
    expect(events).toEqual([expect.objectContaining({ executionId: "ghost", requestId: "s1", handled: false, sent: true, reply: expect.objectContaining({ code: "scope_expired" }) })]);
    events.length = 0;
    await worker.execute("many:1", { onHostRequest: () => ({ bad: Number.NaN }) });
    expect(events).toEqual([expect.objectContaining({ handled: true, sent: true, reply: expect.objectContaining({ kind: "error", code: "internal" }) })]);
    await worker.shutdown();
  });

  it("says sent: false when the cell ended before its handler answered", async () => {
    const events: HostReplyEvent[] = [];
    const worker = await startFake("requests", { onHostReply: (e) => events.push(e) });
    let answerR2!: (v: unknown) => void;
    const r2 = new Promise((resolve) => (answerR2 = resolve));
    await worker.execute("late", { onHostRequest: (_req, ctx) => (ctx.requestId === "r1" ? { ok: 1 } : r2) });
    answerR2({ too: "late" });
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(events.find((e) => e.requestId === "r2")).toMatchObject({ handled: true, sent: false, reply: { kind: "ok", value: { too: "late" } } });
    await worker.shutdown();
  });
});
