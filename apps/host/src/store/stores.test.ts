import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { incidents } from "../db/schema";
import { findEffect, getEffect, insertEffect, receiptOf } from "./effects";
import { deferredDueAt, duePendingInputs, getEvent, markConsumed, openDeferredInputs, pendingInputs, recordInput, recordOutbound, setAttention } from "./events";
import { finishExecution, getExecution, runningExecutions, startExecution } from "./executions";
import { appendHeaderRecord, headerChain } from "./headers";
import { recordIncident } from "./incidents";
import { lastKernelReset, recordKernelReset } from "./kernel";
import { closeUnansweredRequests, recordReply, recordRequest, requestStep } from "./requests";

let db: HostDb;
let close: () => void;
beforeEach(() => {
  const m = memoryDb();
  db = m.db;
  close = () => m.sqlite.close();
});
afterEach(() => close());

const input = (sessionId = "root", attention: unknown = null) => recordInput(db, { sessionId, source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention });

describe("store/events", () => {
  test("inputs are pending until consumed, per session, oldest first; outbound messages never are", () => {
    const a = input();
    const b = input();
    input("other");
    recordOutbound(db, { sessionId: "root", text: "out", effectId: "eff-1", atMs: T0 });
    expect(pendingInputs(db, "root").map((e) => e.id)).toEqual([a.id, b.id]);
    markConsumed(db, [a.id], T0 + 5);
    expect(getEvent(db, a.id)!.consumedAtMs).toBe(T0 + 5);
    expect(pendingInputs(db, "root").map((e) => e.id)).toEqual([b.id]);
    markConsumed(db, [], T0); // nothing to do, no error
  });

  test("attention is recorded after the hook answered; a defer's due time is read back from it", () => {
    const e = input();
    expect(deferredDueAt(e)).toBeNull();
    setAttention(db, e.id, { effective: { action: "defer", seconds: 2, due_at_ms: T0 + 2000 } });
    const row = getEvent(db, e.id)!;
    expect(deferredDueAt(row)).toBe(T0 + 2000);
    expect(openDeferredInputs(db).map((r) => r.id)).toEqual([e.id]);
    expect(duePendingInputs(db, "root", T0 + 1999)).toEqual([]);
    expect(duePendingInputs(db, "root", T0 + 2000).map((r) => r.id)).toEqual([e.id]);
    markConsumed(db, [e.id], T0);
    expect(openDeferredInputs(db)).toEqual([]);
  });

  test("an outbound message is on the operator lane, naming its effect", () => {
    const out = recordOutbound(db, { sessionId: "s", text: "t", effectId: "eff-9", atMs: T0 });
    expect(out).toMatchObject({ direction: "out", lane: "operator", source: "session:s", effectId: "eff-9", payload: { text: "t" } });
    expect(getEvent(db, 999)).toBeUndefined();
  });
});

describe("store/effects", () => {
  test("one effect per execution and request identity; the receipt shape", () => {
    const row = insertEffect(db, { id: "eff-1", sessionId: "root", executionId: "ex-1", requestId: "r1", kind: "local.send", text: "x", status: "held", eventId: null, reason: "r", review: null, hooksRevision: null, createdAtMs: T0 });
    expect(findEffect(db, "ex-1", "r1")).toEqual(row);
    expect(findEffect(db, "ex-1", "r2")).toBeUndefined();
    expect(getEffect(db, "eff-1")).toEqual(row);
    expect(receiptOf(row)).toEqual({ effect_id: "eff-1", status: "held", event_id: null, reason: "r" });
    expect(() => insertEffect(db, { ...row, id: "eff-2" })).toThrow(/UNIQUE/);
  });
});

describe("store/executions", () => {
  test("an execution is opened running and closed once with what was reported", () => {
    startExecution(db, { id: "ex-1", sessionId: "root", generation: "g-1", code: "1", startedAtMs: T0 });
    expect(runningExecutions(db).map((r) => r.id)).toEqual(["ex-1"]);
    const closed = finishExecution(db, "ex-1", { status: "error", error: "boom", truncatedBytes: 3, endedAtMs: T0 + 9 });
    expect(closed).toMatchObject({ status: "error", error: "boom", truncatedBytes: 3, output: [], endedBy: null, failure: null, endedAtMs: T0 + 9 });
    expect(runningExecutions(db)).toEqual([]);
    expect(getExecution(db, "ex-1")).toEqual(closed);
    expect(finishExecution(db, "nope", { status: "ok", endedAtMs: T0 })).toBeUndefined();
  });
});

describe("store/requests", () => {
  test("a request's step is its 1-based index in its execution; unanswered ones are closed with host_restart", () => {
    const a = recordRequest(db, { executionId: "ex-1", requestId: "r1", method: "runtime.inspect", request: {}, requestedAtMs: T0 });
    recordRequest(db, { executionId: "ex-2", requestId: "r1", method: "runtime.inspect", request: {}, requestedAtMs: T0 });
    const c = recordRequest(db, { executionId: "ex-1", requestId: "r2", method: "runtime.inspect", request: {}, requestedAtMs: T0 });
    expect([requestStep(db, "ex-1", a), requestStep(db, "ex-1", c)]).toEqual([1, 2]);
    recordReply(db, a, { kind: "ok", value: 1 }, T0 + 1);
    expect(closeUnansweredRequests(db, T0 + 50)).toHaveLength(2);
    expect(closeUnansweredRequests(db, T0 + 60)).toEqual([]);
  });
});

describe("store/kernel, store/headers, store/incidents", () => {
  test("the last kernel.reset of a session; header records in write order; incidents kept", () => {
    expect(lastKernelReset(db, "root")).toBeUndefined();
    recordKernelReset(db, { sessionId: "root", generation: "g-1", skillsRevision: null, pid: 1, reason: "host_start", atMs: T0 });
    recordKernelReset(db, { sessionId: "other", generation: "g-1", skillsRevision: null, pid: 2, reason: "session_start", atMs: T0 });
    recordKernelReset(db, { sessionId: "root", generation: "g-2", skillsRevision: "r", pid: 3, reason: "worker_died", atMs: T0 + 1 });
    expect(lastKernelReset(db, "root")).toMatchObject({ generation: "g-2", skillsRevision: "r" });
    appendHeaderRecord(db, { sessionId: "root", type: "header_pin", digest: "d1", record: { n: 1 }, atMs: T0 });
    appendHeaderRecord(db, { sessionId: "other", type: "header_pin", digest: "d9", record: { n: 9 }, atMs: T0 });
    appendHeaderRecord(db, { sessionId: "root", type: "header_revision", digest: "d2", record: { n: 2 }, atMs: T0 });
    expect(headerChain(db, "root")).toEqual([{ n: 1 }, { n: 2 }]);
    recordIncident(db, "x.happened", { a: 1 }, T0);
    expect(db.select().from(incidents).all()).toEqual([expect.objectContaining({ kind: "x.happened", detail: { a: 1 }, atMs: T0 })]);
  });
});
