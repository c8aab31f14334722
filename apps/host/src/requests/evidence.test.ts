import { afterEach, describe, expect, test } from "vitest";
import { T0, testWorld, type TestWorld } from "../../test/request-context";
import { recordInput } from "../store/events";
import { finishExecution, startExecution } from "../store/executions";
import { createWait } from "../store/waits";
import { evidenceResolve, resolveRef } from "./evidence";
import { cutToFit, REPLY_BUDGET_BYTES } from "./fit";

let world: TestWorld;
afterEach(() => world.close());

type Reply = { results: Array<{ ref: string; ok: boolean; value?: Record<string, unknown>; error?: { code: string }; truncated_bytes?: number }>; truncated_bytes: number };

describe("resolveRef", () => {
  test("each kind resolves to its row with snake_case keys", async () => {
    world = testWorld();
    const event = recordInput(world.db, { sessionId: "root", source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention: null });
    createWait(world.db, { id: "w-1", sessionId: "root", executionId: "ex-1", reason: "r", seconds: 1.5, nowMs: T0 });
    expect(await resolveRef(world.host.store, `event:${event.id}`)).toMatchObject({ ok: true, value: { id: event.id, session_id: "root", received_at_ms: T0, payload: { text: "hi" }, consumed_at_ms: null } });
    expect(await resolveRef(world.host.store, "execution:ex-1")).toMatchObject({ ok: true, value: { id: "ex-1", session_id: "root", started_at_ms: T0, status: "running" } });
    expect(await resolveRef(world.host.store, "wait:w-1")).toMatchObject({ ok: true, value: { deadline_ms: T0 + 1500, pending_input: true, woken_by: "pending_input" } });
    for (const r of ["event:1", "execution:ex-1", "wait:w-1"]) {
      const value = ((await resolveRef(world.host.store, r)) as { value: Record<string, unknown> }).value;
      expect(Object.keys(value).filter((k) => /[A-Z]/.test(k))).toEqual([]);
    }
  });

  test.each([
    ["bogus", "invalid_request"],
    ["event:", "invalid_request"],
    [":x", "invalid_request"],
    ["nope:1", "invalid_request"],
    ["event:0", "not_found"],
    ["event:abc", "not_found"],
    ["event:99999", "not_found"],
    ["execution:missing", "not_found"],
    ["effect:missing", "not_found"],
    ["wait:missing", "not_found"],
    ["work_item:missing", "not_found"],
    ["candidate:missing", "not_found"],
  ])("%s is answered with %s", async (ref, code) => {
    world = testWorld();
    expect(await resolveRef(world.host.store, ref)).toMatchObject({ ref, ok: false, error: { code } });
  });
});

describe("evidence.resolve reply bound", () => {
  function bigExecution(w: TestWorld, id: string, bytes: number): void {
    startExecution(w.db, { id, sessionId: "root", generation: "g-1", code: "print('x' * n)", startedAtMs: T0 });
    finishExecution(w.db, id, { status: "ok", output: [{ stream: "stdout", text: "é".repeat(bytes / 2) }], endedAtMs: T0 + 1 });
  }

  test("a small reply is whole, with truncated_bytes 0", async () => {
    world = testWorld();
    bigExecution(world, "ex-big", 1000);
    const reply = (await evidenceResolve(world.ctx, { refs: ["execution:ex-big", "bogus"] })) as Reply;
    expect(reply.truncated_bytes).toBe(0);
    expect(reply.results[0]!.truncated_bytes).toBeUndefined();
    expect((reply.results[0]!.value!.output as Array<{ text: string }>)[0]!.text).toHaveLength(500);
  });

  test("20 refs to a 65 KB execution fit one frame; what is cut is counted, per result and in all", async () => {
    world = testWorld();
    bigExecution(world, "ex-big", 65_536);
    const refs = Array.from({ length: 20 }, () => "execution:ex-big");
    const reply = (await evidenceResolve(world.ctx, { refs })) as Reply;
    const encoded = Buffer.byteLength(JSON.stringify(reply));
    expect(encoded).toBeLessThanOrEqual(REPLY_BUDGET_BYTES);
    // Filled, not gutted: the cut is about the overflow.
    expect(encoded).toBeGreaterThan(REPLY_BUDGET_BYTES - 70_000);
    const kept = reply.results.reduce((n, r) => n + Buffer.byteLength((r.value!.output as Array<{ text: string }>)[0]!.text), 0);
    expect(kept + reply.truncated_bytes).toBe(20 * 65_536);
    expect(reply.results.reduce((n, r) => n + (r.truncated_bytes ?? 0), 0)).toBe(reply.truncated_bytes);
    expect(reply.truncated_bytes).toBeGreaterThan(0);
  });

  test("a budget is never exceeded, whatever the escapes cost", async () => {
    world = testWorld();
    startExecution(world.db, { id: "ex-ctl", sessionId: "root", generation: "g-1", code: "", startedAtMs: T0 });
    finishExecution(world.db, "ex-ctl", { status: "ok", output: [{ stream: "stdout", text: "\u0001".repeat(50_000) }], endedAtMs: T0 });
    const reply = await evidenceResolve(world.ctx, { refs: ["execution:ex-ctl", "execution:ex-ctl"] }, 20_000);
    expect(Buffer.byteLength(JSON.stringify(reply))).toBeLessThanOrEqual(20_000);
  });
});

describe("cutToFit", () => {
  test("never leaves half a surrogate pair", () => {
    const parts = [{ text: "😀".repeat(1000) }];
    const cut = cutToFit(parts, () => JSON.stringify(parts), 1001);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(parts[0]!.text)).toBe(false);
    expect(cut[0]! + Buffer.byteLength(parts[0]!.text)).toBe(4000);
  });
});
