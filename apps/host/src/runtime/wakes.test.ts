import { frameInput } from "@klbr/transcript";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import type { HookOutcome } from "../requests/context";
import { sqliteStore } from "../store/sqlite";
import { getEvent, recordInput, setAttention } from "../store/events";
import { createWait, getWait } from "../store/waits";
import { effectiveAttention, Wakes } from "./wakes";

// Wakes alone (C6, C8) over an in-memory log on vitest's fake clock: the host clock is Date.now,
// so a deadline or a deferred input fires when the fake time reaches it, and the tests say when
// it must not have yet.
let db: HostDb;
let sqlite: Database.Database;
let notes: Array<Record<string, unknown>>;
let stopping: boolean;
let hook: HookOutcome;
let hookCalls: unknown[];

function wakes(): Wakes {
  return new Wakes({
    store: sqliteStore(db, sqlite),
    now: () => Date.now(),
    notify: (n) => void notes.push(n as never),
    life: {
      get stopping() {
        return stopping;
      },
    } as never,
    hooks: { invoke: async (...args: unknown[]) => (hookCalls.push(args), hook) } as never,
  });
}

const decide = (value: Record<string, unknown>): HookOutcome => ({ ok: true, value, revision: "h1" });
const wait = (id: string, sessionId = "root", seconds: number | null = null) => createWait(db, { id, sessionId, executionId: "ex-1", reason: "r", seconds, nowMs: Date.now() }).row;
const types = () => notes.map((n) => n.type);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  ({ db, sqlite } = memoryDb());
  notes = [];
  stopping = false;
  hook = decide({ action: "wake", priority: 10 });
  hookCalls = [];
});
afterEach(() => vi.useRealTimers());

describe("effectiveAttention (C6)", () => {
  it("operator input always wakes; no decision wakes with the reason; otherwise the hook's decision", () => {
    expect(effectiveAttention("operator", decide({ action: "ignore" }))).toEqual({ action: "wake", priority: 100, forced: true });
    expect(effectiveAttention("peer:x", { ok: false, reason: "timeout", revision: null })).toEqual({ action: "wake", priority: 50, reason: "attention hook unavailable: timeout" });
    expect(effectiveAttention("peer:x", decide({ action: "ignore", why: 1 }))).toEqual({ action: "ignore", why: 1 });
  });
});

describe("Wakes.postInput", () => {
  it("records the input, asks attention.plan, keeps its decision and wakes the session's wait with the input", async () => {
    const w = wait("w-1");
    const other = wait("w-other", "s2");
    const result = await wakes().postInput("hello");
    const event = getEvent(db, result.event_id)!;
    expect(event).toMatchObject({ sessionId: "root", source: "operator", receivedAtMs: T0, payload: { text: "hello" } });
    expect(hookCalls).toEqual([[null, "attention.plan", { event_id: result.event_id, source: "operator", received_at_ms: T0 }]]);
    const attention = { hook: { action: "wake", priority: 10 }, revision: "h1", effective: { action: "wake", priority: 100, forced: true } };
    expect(result.attention).toEqual(attention);
    expect(event.attention).toEqual(attention);
    expect(getWait(db, w.id)).toMatchObject({ state: "woken", wokenBy: `event:${result.event_id}`, wokenAtMs: T0 });
    expect(getWait(db, other.id)!.state).toBe("waiting");
    expect(notes).toEqual([
      { type: "input", session_id: "root", event_id: result.event_id, source: "operator", attention, at_ms: T0 },
      { type: "wake", session_id: "root", wait_id: "w-1", woken_by: `event:${result.event_id}`, at_ms: T0, inputs: [frameInput({ source: "operator", received_at_ms: T0, payload: { text: "hello" } })] },
    ]);
    // Taken into account by the wake.
    expect(getEvent(db, result.event_id)!.consumedAtMs).toBe(T0);
  });

  it("to another session, from another source, as the hook decides: ignore is consumed and wakes nothing", async () => {
    const w = wait("w-1", "s2");
    hook = decide({ action: "ignore" });
    const result = await wakes().postInput("noise", { sessionId: "s2", source: "peer:p" });
    expect(getEvent(db, result.event_id)).toMatchObject({ sessionId: "s2", source: "peer:p", consumedAtMs: T0 });
    expect(getWait(db, w.id)!.state).toBe("waiting");
    expect(types()).toEqual(["input"]);
  });

  it("an unavailable hook wakes (and says so in the attention kept)", async () => {
    wait("w-1", "s2");
    hook = { ok: false, reason: "crashed", revision: null };
    const result = await wakes().postInput("x", { sessionId: "s2", source: "peer:p" });
    expect(result.attention).toEqual({ hook: { unavailable: "crashed" }, revision: null, effective: { action: "wake", priority: 50, reason: "attention hook unavailable: crashed" } });
    expect(types()).toEqual(["input", "wake"]);
  });

  it("a decision that neither wakes, ignores nor defers leaves the input pending and the wait open", async () => {
    const w = wait("w-1", "s2");
    hook = decide({ action: "queue" });
    const result = await wakes().postInput("later", { sessionId: "s2", source: "peer:p" });
    expect(getEvent(db, result.event_id)!.consumedAtMs).toBeNull();
    expect(getWait(db, w.id)!.state).toBe("waiting");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a defer keeps its due instant and wakes the session then, not a millisecond before", async () => {
    const w = wait("w-1", "s2");
    hook = decide({ action: "defer", seconds: 1.5004 });
    const result = await wakes().postInput("soon", { sessionId: "s2", source: "peer:p" });
    expect((result.attention as { effective: unknown }).effective).toEqual({ action: "defer", seconds: 1.5004, due_at_ms: T0 + 1500 });
    expect(getEvent(db, result.event_id)!.consumedAtMs).toBeNull();
    expect(types()).toEqual(["input"]);
    await vi.advanceTimersByTimeAsync(1499);
    expect(getWait(db, w.id)!.state).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(getWait(db, w.id)).toMatchObject({ state: "woken", wokenBy: `deferred:event:${result.event_id}`, wokenAtMs: T0 + 1500 });
    expect(notes.slice(1)).toEqual([
      { type: "wake", session_id: "s2", wait_id: "w-1", woken_by: `deferred:event:${result.event_id}`, at_ms: T0 + 1500, inputs: [frameInput({ source: "peer:p", received_at_ms: T0, payload: { text: "soon" } })] },
      { type: "deferred", session_id: "s2", event_id: result.event_id, at_ms: T0 + 1500 },
    ]);
    expect(getEvent(db, result.event_id)!.consumedAtMs).toBe(T0 + 1500);
  });

  it("a deferred input taken into account meanwhile wakes nothing when due", async () => {
    const w = wait("w-1", "s2");
    hook = decide({ action: "defer", seconds: 1 });
    const wk = wakes();
    const result = await wk.postInput("soon", { sessionId: "s2", source: "peer:p" });
    await wk.takePendingInputs("s2");
    await vi.advanceTimersByTimeAsync(5000);
    expect(getWait(db, w.id)!.state).toBe("waiting");
    expect(types()).toEqual(["input"]);
    expect(getEvent(db, result.event_id)!.consumedAtMs).toBe(T0);
  });
});

describe("Wakes timers", () => {
  it("a wait's deadline wakes that wait only, when it passes", async () => {
    const a = wait("w-a", "s1");
    const b = wait("w-b", "s2");
    const wk = wakes();
    wk.scheduleWaitDeadline(a.id, T0 + 2000);
    await vi.advanceTimersByTimeAsync(1999);
    expect(getWait(db, a.id)!.state).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(getWait(db, a.id)).toMatchObject({ state: "woken", wokenBy: "deadline", wokenAtMs: T0 + 2000 });
    expect(getWait(db, b.id)!.state).toBe("waiting");
    expect(notes).toEqual([{ type: "wake", session_id: "s1", wait_id: "w-a", woken_by: "deadline", at_ms: T0 + 2000, inputs: [] }]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a deadline for a wait already woken announces nothing", async () => {
    const a = wait("w-a");
    const wk = wakes();
    wk.scheduleWaitDeadline(a.id, T0 + 10);
    await wk.postInput("first");
    notes.length = 0;
    await vi.advanceTimersByTimeAsync(10);
    expect(notes).toEqual([]);
  });

  it("an overdue instant fires at once; one past the timer range is held, not fired early", async () => {
    const a = wait("w-a", "s1");
    const b = wait("w-b", "s2");
    const wk = wakes();
    wk.scheduleWaitDeadline(a.id, T0 - 5000);
    wk.scheduleWaitDeadline(b.id, T0 + 2 ** 32);
    await vi.advanceTimersByTimeAsync(0);
    expect(getWait(db, a.id)!.state).toBe("woken");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(getWait(db, b.id)!.state).toBe("waiting");
    wk.stop();
  });

  it("while the host stops nothing is scheduled, and a timer due then does not fire", async () => {
    const a = wait("w-a", "s1");
    const b = wait("w-b", "s2");
    const wk = wakes();
    wk.scheduleWaitDeadline(a.id, T0 + 100);
    stopping = true;
    wk.scheduleWaitDeadline(b.id, T0 + 100);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(getWait(db, a.id)!.state).toBe("waiting");
    expect(notes).toEqual([]);
  });

  it("stop clears every timer", async () => {
    const a = wait("w-a");
    const wk = wakes();
    wk.scheduleWaitDeadline(a.id, T0 + 100);
    wk.scheduleDeferredInput(1, T0 + 100);
    expect(vi.getTimerCount()).toBe(2);
    wk.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(getWait(db, a.id)!.state).toBe("waiting");
  });

  it("timers keep no process alive", () => {
    const wk = wakes();
    wk.scheduleWaitDeadline("w-x", T0 + 100);
    const [timer] = [...(wk as unknown as { timers: Set<NodeJS.Timeout> }).timers];
    expect(timer!.hasRef()).toBe(false);
    wk.stop();
  });

  it("restore schedules open waits with a deadline and deferred inputs from the log (overdue ones at once)", async () => {
    const a = createWait(db, { id: "w-a", sessionId: "s1", executionId: "ex-1", reason: "r", seconds: 3, nowMs: T0 }).row;
    const none = createWait(db, { id: "w-none", sessionId: "s2", executionId: "ex-2", reason: "r", seconds: null, nowMs: T0 }).row;
    const c = createWait(db, { id: "w-c", sessionId: "s3", executionId: "ex-3", reason: "r", seconds: null, nowMs: T0 }).row;
    const input = recordInput(db, { sessionId: "s3", source: "peer:p", receivedAtMs: T0 - 10_000, payload: { text: "old" }, attention: null });
    setAttention(db, input.id, { effective: { action: "defer", due_at_ms: T0 - 1 } });
    const wk = wakes();
    await wk.restore([a, none]);
    expect(vi.getTimerCount()).toBe(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(getWait(db, c.id)!.wokenBy).toBe(`deferred:event:${input.id}`);
    await vi.advanceTimersByTimeAsync(2999);
    expect(getWait(db, a.id)!.state).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(getWait(db, a.id)!.state).toBe("woken");
    expect(getWait(db, none.id)!.state).toBe("waiting");
  });
});

describe("Wakes.announceInput", () => {
  it("gives a session's inputs with its first wake only", async () => {
    const input = recordInput(db, { sessionId: "root", source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention: null });
    const one = wait("w-1");
    const two = { ...one, id: "w-2" };
    const elsewhere = { ...one, id: "w-3", sessionId: "s2" };
    await wakes().announceInput(input, [one, two, elsewhere]);
    expect(notes.map((n) => [n.type, n.wait_id, (n.inputs as string[] | undefined)?.length])).toEqual([
      ["input", undefined, undefined],
      ["wake", "w-1", 1],
      ["wake", "w-2", 0],
      ["wake", "w-3", 0],
    ]);
  });

  it("takePendingInputs frames the session's inputs oldest first and consumes them", async () => {
    recordInput(db, { sessionId: "root", source: "operator", receivedAtMs: T0, payload: { text: "a" }, attention: null });
    recordInput(db, { sessionId: "root", source: "peer:p", receivedAtMs: T0 + 1, payload: { text: "b" }, attention: null });
    recordInput(db, { sessionId: "s2", source: "operator", receivedAtMs: T0, payload: { text: "c" }, attention: null });
    const wk = wakes();
    expect(await wk.takePendingInputs("root")).toEqual([
      frameInput({ source: "operator", received_at_ms: T0, payload: { text: "a" } }),
      frameInput({ source: "peer:p", received_at_ms: T0 + 1, payload: { text: "b" } }),
    ]);
    expect(await wk.takePendingInputs("root")).toEqual([]);
    expect(await wk.takePendingInputs("s2")).toHaveLength(1);
  });
});
