import { afterEach, describe, expect, test } from "vitest";
import { T0, testWorld, type TestWorld } from "../../test/request-context";
import { getEffect } from "../store/effects";
import { getEvent } from "../store/events";
import { localSend } from "./local";

let world: TestWorld;
afterEach(() => world.close());

describe("local.send handler", () => {
  test("allow: a durable operator-lane event, a confirmed receipt, subscribers told once", async () => {
    world = testWorld();
    const receipt = await localSend(world.ctx, { text: "hello" });
    expect(receipt).toMatchObject({ status: "confirmed", reason: null });
    expect(getEvent(world.db, receipt.event_id!)).toMatchObject({ direction: "out", lane: "operator", payload: { text: "hello" }, effectId: receipt.effect_id });
    expect(getEffect(world.db, receipt.effect_id)).toMatchObject({ executionId: "ex-1", requestId: "rq-1", status: "confirmed", hooksRevision: "rev-1" });
    expect(world.hookCalls).toEqual([{ slot: "delivery.review", input: { effect_id: receipt.effect_id, destination: "operator", text: "hello" } }]);
    expect(world.notes).toEqual([{ type: "message", session_id: "root", event_id: receipt.event_id, text: "hello", at_ms: T0 }]);
  });

  test.each([
    ["hold", { ok: true as const, value: { action: "hold", reason: "looks like a secret" }, revision: "r" }, "looks like a secret"],
    ["an invalid result", { ok: true as const, value: { action: "maybe" }, revision: "r" }, "delivery review returned an invalid result"],
    ["an unavailable hook", { ok: false as const, reason: "worker dead", revision: null }, "delivery review unavailable: worker dead"],
  ])("%s: held with the reason, no event, nobody told", async (_name, hook, reason) => {
    world = testWorld({ hook });
    const receipt = await localSend(world.ctx, { text: "x" });
    expect(receipt).toMatchObject({ status: "held", event_id: null, reason: expect.stringContaining(reason) });
    expect(world.notes).toEqual([]);
  });

  test("a retry with the same execution and request id returns the same receipt without a second review", async () => {
    world = testWorld();
    const first = await localSend(world.ctx, { text: "once" });
    const again = await localSend(world.ctx, { text: "once" });
    expect(again).toEqual(first);
    expect(world.hookCalls).toHaveLength(1);
    expect(world.notes).toHaveLength(1);
  });

  test.each([
    ["yielded", { yielded: true }],
    ["ended", { ended: true }],
  ])("a cell that %s while its send was reviewed makes no effect (scope_expired)", async (_name, change) => {
    world = testWorld();
    const invoke = world.host.hooks.invoke.bind(world.host.hooks);
    world.host.hooks.invoke = async (live, slot, input) => {
      Object.assign(world.live, change);
      return invoke(live, slot, input);
    };
    await expect(localSend(world.ctx, { text: "late" })).rejects.toMatchObject({ code: "scope_expired" });
    expect(world.sqlite.prepare("select count(*) as n from effects").get()).toEqual({ n: 0 });
    expect(world.sqlite.prepare("select count(*) as n from events").get()).toEqual({ n: 0 });
  });
});
