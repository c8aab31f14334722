import { afterEach, describe, expect, test } from "vitest";
import { T0, testWorld, type TestWorld } from "../../test/request-context";
import { recordInput } from "../store/events";
import { getWait } from "../store/waits";
import { runtimeInspect, runtimeInstructions, runtimeWait } from "./runtime";

let world: TestWorld;
afterEach(() => world.close());

describe("runtime.wait handler", () => {
  test("records the wait, marks the execution yielded, schedules the exact deadline", async () => {
    world = testWorld();
    const reply = await runtimeWait(world.ctx, { seconds: 2.25, reason: "later" });
    expect(reply).toEqual({ wait_id: "wait-1", deadline_ms: T0 + 2250, pending_input: false });
    expect(world.live.yielded).toBe(true);
    expect(world.deadlines).toEqual([{ waitId: "wait-1", deadlineMs: T0 + 2250 }]);
    expect(getWait(world.db, "wait-1")).toMatchObject({ sessionId: "root", executionId: "ex-1", reason: "later", state: "waiting" });
    expect(world.notes).toEqual([]);
  });

  test("no deadline: nothing is scheduled", async () => {
    world = testWorld();
    expect((await runtimeWait(world.ctx, { seconds: null, reason: "" })).deadline_ms).toBeNull();
    expect(world.deadlines).toEqual([]);
  });

  test("pending input: woken at once, subscribers told with the inputs, no timer", async () => {
    let taken = 0;
    world = testWorld({ host: { wakes: { takePendingInputs: async () => (taken++, ["[t · operator]\nhi"]) } } });
    recordInput(world.db, { sessionId: "root", source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention: null });
    const reply = await runtimeWait(world.ctx, { seconds: 5, reason: "" });
    expect(reply.pending_input).toBe(true);
    expect(world.deadlines).toEqual([]);
    expect(taken).toBe(1);
    expect(world.notes).toEqual([{ type: "wake", session_id: "root", wait_id: reply.wait_id, woken_by: "pending_input", at_ms: T0, inputs: ["[t · operator]\nhi"] }]);
  });

  test("a second wait of the session supersedes the first", async () => {
    world = testWorld();
    await runtimeWait(world.ctx, { seconds: 60, reason: "first" });
    await runtimeWait({ ...world.ctx, live: { ...world.live, id: "ex-2", yielded: false } }, { seconds: 60, reason: "second" });
    expect(getWait(world.db, "wait-1")).toMatchObject({ state: "superseded", wokenBy: "superseded:wait-2" });
    expect(getWait(world.db, "wait-2")).toMatchObject({ state: "waiting" });
  });
});

describe("runtime.inspect / runtime.instructions handlers", () => {
  test("answer for the cell's own session", async () => {
    const asked: string[] = [];
    world = testWorld({
      live: { sessionId: "s-9" },
      host: { status: { inspect: (s) => (asked.push(`inspect:${s}`), { session_id: s }) }, instructions: { current: async (s) => (asked.push(`instructions:${s}`), { text: "t" }) } },
    });
    expect(await runtimeInspect(world.ctx)).toEqual({ session_id: "s-9" });
    expect(await runtimeInstructions(world.ctx)).toEqual({ text: "t" });
    expect(asked).toEqual(["inspect:s-9", "instructions:s-9"]);
  });
});
