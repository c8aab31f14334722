// The Store contract (C21): the same cases against SqliteStore (a migrated SQLite file) and
// PgStore (a migrated database of the run's real PostgreSQL cluster). Both must give the same
// answers, and both fence a session's writes by its lease key (LEASE_LOST, nothing written).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import type { SessionFence, Store } from "../src/store/api";
import type { HeaderPlan } from "../src/store/api/headers";
import { blobDigest } from "../src/store/blobs";
import { pgLeases, sqliteLeases, type LeaseKey, type LeaseStore } from "../src/store/leases";
import { pgStore } from "../src/store/pg";
import { sqliteStore } from "../src/store/sqlite";
import { tempDir } from "./helpers";

/** A fence whose keys the test sets: a session with no key writes unfenced. */
class TestFence implements SessionFence {
  readonly keys = new Map<string, LeaseKey>();
  keyFor(sessionId: string): LeaseKey | null {
    return this.keys.get(sessionId) ?? null;
  }
}

interface Subject {
  store: Store;
  leases: LeaseStore<unknown>;
  fence: TestFence;
  close(): Promise<void>;
}

const dir = tempDir("klbr-contract-");
let pgDb: Awaited<ReturnType<typeof testDatabase>>;
const subjects: Record<"sqlite" | "postgres", Subject | null> = { sqlite: null, postgres: null };

beforeAll(async () => {
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const db = migrateHostDb(sqlite);
  const liteFence = new TestFence();
  subjects.sqlite = { store: sqliteStore(db, sqlite, liteFence), leases: sqliteLeases(db, sqlite) as LeaseStore<unknown>, fence: liteFence, close: async () => void sqlite.close() };
  pgDb = await testDatabase();
  if (pgDb.skip) return;
  const pg = openPostgres(pgDb.url!, { max: 4 });
  await migratePostgres(pg.pool);
  const pgFence = new TestFence();
  const store = pgStore(pg, pgFence);
  subjects.postgres = { store, leases: pgLeases(pg.db) as LeaseStore<unknown>, fence: pgFence, close: () => store.close() };
});
afterAll(async () => {
  await subjects.sqlite?.close();
  await subjects.postgres?.close();
  await pgDb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const profile = { name: "r", api: "openai", base_url: "http://127.0.0.1:1", model: "m" };
const request = (sessionId: string, id: string, headerRecordId: number) => ({
  id,
  sessionId,
  turnId: `t-${id}`,
  route: "r",
  api: "openai",
  model: "m",
  profile,
  headerRecordId,
  frontierId: null,
  throughSeq: 0,
  bodyDigest: "d",
  bodyBytes: 10,
  sharedPrefixBytes: 0,
  startedAtMs: 5,
});

describe.each(["sqlite", "postgres"] as const)("Store on %s", (dialect) => {
  const subject = (ctx: { skip(reason: string): never }): Subject => {
    const s = subjects[dialect];
    if (!s) return ctx.skip(pgDb.skip ?? "no store");
    return s;
  };

  test("events: inputs pending until consumed, outbound recorded, attention set, deferred inputs due only after their seconds", async (ctx) => {
    const { store } = subject(ctx);
    const a = await store.recordInput({ sessionId: "ev", source: "operator", receivedAtMs: 10, payload: { text: "one" }, attention: null });
    const b = await store.recordInput({ sessionId: "ev", source: "operator", receivedAtMs: 11, payload: { text: "two", extra: [1, { k: "v" }] }, attention: { effective: { action: "defer", due_at_ms: 500 } } });
    expect(a).toMatchObject({ sessionId: "ev", lane: "operator", direction: "in", payload: { text: "one" }, consumedAtMs: null });
    expect(b.id).toBeGreaterThan(a.id);
    expect((await store.pendingInputs("ev")).map((e) => e.payload)).toEqual([{ text: "one" }, { text: "two", extra: [1, { k: "v" }] }]);
    expect((await store.duePendingInputs("ev", 100)).map((e) => e.id)).toEqual([a.id]);
    expect((await store.duePendingInputs("ev", 500)).map((e) => e.id)).toEqual([a.id, b.id]);
    expect((await store.openDeferredInputs()).map((e) => e.id)).toEqual([b.id]);
    await store.setAttention("ev", a.id, { hook: "h", effective: { action: "wake" } });
    await store.markConsumed("ev", [a.id], 20);
    expect(await store.getEvent(a.id)).toMatchObject({ consumedAtMs: 20, attention: { hook: "h", effective: { action: "wake" } } });
    expect((await store.pendingInputs("ev")).map((e) => e.id)).toEqual([b.id]);
    const out = await store.recordOutbound({ sessionId: "ev", text: "hi", effectId: "fx-1", atMs: 30 });
    expect(out).toMatchObject({ direction: "out", source: "session:ev", payload: { text: "hi" }, effectId: "fx-1", receivedAtMs: 30 });
    expect(await store.getEvent(999_999)).toBeUndefined();
  });

  test("a wake takes a session's inputs once: concurrent takes split them, a deferred input taken meanwhile wakes nothing", async (ctx) => {
    const { store } = subject(ctx);
    const s = "take";
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.recordInput({ sessionId: s, source: "operator", receivedAtMs: 100 + i, payload: { text: `t${i}` }, attention: null })).id);
    await store.recordInput({ sessionId: "take-other", source: "operator", receivedAtMs: 1, payload: { text: "elsewhere" }, attention: null });
    // Taken at once, from two callers: every input goes to exactly one of them, oldest first, marked consumed.
    const [one, two] = await Promise.all([store.takePendingInputs(s, 200), store.takePendingInputs(s, 201)]);
    expect([...one!, ...two!].map((e) => e.id).sort((x, y) => x - y)).toEqual(ids);
    for (const taken of [one!, two!]) expect(taken.map((e) => e.id)).toEqual([...taken.map((e) => e.id)].sort((x, y) => x - y));
    expect(one!.every((e) => e.consumedAtMs === 200) && two!.every((e) => e.consumedAtMs === 201)).toBe(true);
    expect(await store.takePendingInputs(s, 202)).toEqual([]);
    expect((await store.pendingInputs("take-other")).map((e) => e.payload)).toEqual([{ text: "elsewhere" }]);
    // A deferred input's wake: null (nothing woken) once the input was taken; it wakes the waits while it is not.
    await store.createWait({ id: "tw1", sessionId: s, executionId: "e", reason: "r", seconds: null, nowMs: 300 });
    expect(await store.wakeForInput(s, ids[0]!, `deferred:event:${ids[0]}`, 301)).toBeNull();
    expect(await store.wakeForInput(s, 999_999, "deferred:event:999999", 301)).toBeNull();
    expect((await store.getWait("tw1"))?.state).toBe("waiting");
    const later = await store.recordInput({ sessionId: s, source: "peer:p", receivedAtMs: 400, payload: { text: "later" }, attention: { effective: { action: "defer", due_at_ms: 500 } } });
    const woken = await store.wakeForInput(s, later.id, `deferred:event:${later.id}`, 500);
    expect(woken?.map((w) => [w.id, w.state, w.wokenBy, w.wokenAtMs])).toEqual([["tw1", "woken", `deferred:event:${later.id}`, 500]]);
  });

  test("executions, host requests and kernel resets: open, close, find the running ones, number the requests", async (ctx) => {
    const { store } = subject(ctx);
    const started = await store.startExecution({ id: "ex-1", sessionId: "cx", generation: "g-1", code: "1+1", startedAtMs: 1, origin: "exec" });
    expect(started).toMatchObject({ status: "running", output: null, origin: "exec" });
    expect((await store.runningExecutions()).map((e) => e.id)).toContain("ex-1");
    const r1 = await store.recordRequest("cx", { executionId: "ex-1", requestId: "q1", method: "runtime.send", request: { text: "a" }, requestedAtMs: 2 });
    const r2 = await store.recordRequest("cx", { executionId: "ex-1", requestId: "q2", method: "runtime.wait", request: {}, requestedAtMs: 3 });
    await store.recordReply("cx", r1, { kind: "ok", value: 1 }, 4);
    expect([await store.requestStep("ex-1", r1), await store.requestStep("ex-1", r2)]).toEqual([1, 2]);
    expect((await store.hostRequestsOf("ex-1")).map((r) => [r.requestId, r.reply])).toEqual([["q1", { kind: "ok", value: 1 }], ["q2", null]]);
    const done = await store.finishExecution("cx", "ex-1", { status: "ok", output: [{ stream: "stdout", text: "2\n" }], endedAtMs: 9, cpuMs: 3 });
    expect(done).toMatchObject({ status: "ok", output: [{ stream: "stdout", text: "2\n" }], truncatedBytes: 0, error: null, endedAtMs: 9, cpuMs: 3, peakRssBytes: null });
    expect(await store.finishExecution("cx", "nope", { status: "ok", endedAtMs: 9 })).toBeUndefined();
    expect((await store.runningExecutions()).map((e) => e.id)).not.toContain("ex-1");
    expect(await store.executionCode("ex-1")).toBe("1+1");
    expect(await store.lastKernelReset("cx")).toBeUndefined();
    await store.recordKernelReset({ sessionId: "cx", generation: "g-1", skillsRevision: "s", pid: 42, reason: "start", atMs: 1 });
    await store.recordKernelReset({ sessionId: "cx", generation: "g-2", skillsRevision: null, pid: null, reason: "idle_culled", atMs: 2 });
    expect(await store.lastKernelReset("cx")).toMatchObject({ generation: "g-2", reason: "idle_culled", pid: null });
  });

  test("a turn: header pin, model request, reply committed with its transcript record, cells read back as the model reads them", async (ctx) => {
    const { store } = subject(ctx);
    const s = "turn";
    const pin = await store.appendHeaderRecord({ sessionId: s, type: "header_pin", digest: "p1", record: { text: "be brief", digest: "p1" }, atMs: 1 });
    expect(await store.pinOf(s)).toEqual({ id: pin, text: "be brief" });
    expect(await store.pinIdOf(s)).toBe(pin);
    expect(await store.latestPin(s)).toEqual({ id: pin, text: "be brief", digest: "p1" });
    const input = await store.recordInput({ sessionId: s, source: "operator", receivedAtMs: 2, payload: { text: "add" }, attention: null });
    await store.transcribeNew(s, pin, () => 3);
    await store.transcribeNew(s, pin, () => 4); // nothing new: nothing appended twice
    expect((await store.pendingInputs(s)).length).toBe(0);
    await store.startModelRequest(request(s, "mr-1", pin));
    const reply = { text: "", calls: [{ id: "c1", name: "python", arguments: '{"code":"1+1"}' }], stop: "tool_calls" };
    const replySeq = await store.commitModelReply(s, "mr-1", { reply, responseModel: "m-1", usage: null, retries: 0, endedAtMs: 6 });
    await store.startExecution({ id: "ex-t", sessionId: s, generation: "g-1", code: "1+1", startedAtMs: 7, origin: "model" });
    const cellSeq = await store.appendTranscript({ sessionId: s, kind: "cell", ref: "ex-t", requestId: "mr-1", callId: "c1", atMs: 7 });
    expect(cellSeq).toBeGreaterThan(replySeq);
    // A cell still running ends what can be read.
    expect((await store.loadTranscript(s, 0)).map((r) => r.kind)).toEqual(["input", "reply"]);
    expect(await store.lastReply(s)).toEqual({ requestId: "mr-1", reply, answers: [{ kind: "cell", ref: "ex-t", callId: "c1", executionStatus: "running" }] });
    await store.finishExecution(s, "ex-t", { status: "ok", output: [{ stream: "stdout", text: "2\n" }], endedAtMs: 8 });
    const records = await store.loadTranscript(s, 0);
    expect(records).toEqual([
      { seq: records[0]!.seq, kind: "input", event: { source: "operator", received_at_ms: 2, payload: { text: "add" } } },
      { seq: replySeq, kind: "reply", request_id: "mr-1", reply },
      {
        seq: cellSeq,
        kind: "cell",
        request_id: "mr-1",
        call_id: "c1",
        result: { execution_id: "ex-t", status: "ok", output: [{ stream: "stdout", text: "2\n" }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: 7, ended_at_ms: 8 },
      },
    ]);
    expect(await store.lastSeq(s)).toBe(cellSeq);
    expect(await store.maxRef(s, "input")).toBe(input.id);
    expect(await store.cellRecordSeq(s, "ex-t")).toBe(cellSeq);
    expect(await store.seqBefore(s, cellSeq)).toBe(replySeq);
    expect(await store.lastCellThrough(s, cellSeq)).toBe("ex-t");
    expect(await store.callIdOfCell("ex-t")).toBe("c1");
    expect(await store.sessionsToResume()).toContain(s);
    expect((await store.sessionModelRequests(s)).map((r) => [r.id, r.status, r.responseModel, r.reply])).toEqual([["mr-1", "ok", "m-1", reply]]);
    expect((await store.modelRequestById("mr-1"))?.profile).toEqual(profile);
    await store.startModelRequest(request(s, "mr-2", pin));
    expect(await store.closeRunningModelRequests(100)).toEqual(["mr-2"]);
    expect((await store.modelRequestById("mr-2"))?.error).toEqual({ code: "host_restart", message: "the host stopped before the reply arrived", status: null });
  });

  test("namespace lost: a model cell in a generation after an idle cull is told why", async (ctx) => {
    const { store } = subject(ctx);
    const s = "nsl";
    await store.startExecution({ id: "nsl-1", sessionId: s, generation: "g-1", code: "x = 1", startedAtMs: 1 });
    const first = await store.appendTranscript({ sessionId: s, kind: "cell", ref: "nsl-1", requestId: "r", callId: "c", atMs: 1 });
    await store.recordKernelReset({ sessionId: s, generation: "g-2", reason: "idle_culled", atMs: 2 });
    await store.startExecution({ id: "nsl-2", sessionId: s, generation: "g-2", code: "x", startedAtMs: 3 });
    const second = await store.appendTranscript({ sessionId: s, kind: "cell", ref: "nsl-2", requestId: "r", callId: "c2", atMs: 3 });
    expect(await store.namespaceLost(s, first, "nsl-1")).toBeNull();
    expect(await store.namespaceLost(s, second, "nsl-2")).toBe("idle_culled");
  });

  test("waits: one open wait per session, pending input wakes at once, deadlines wake, recovery closes what a crash left", async (ctx) => {
    const { store } = subject(ctx);
    const s = "wt";
    const w1 = await store.createWait({ id: "w1", sessionId: s, executionId: "e", reason: "r", seconds: 10, nowMs: 1000 });
    expect(w1.reply).toEqual({ wait_id: "w1", deadline_ms: 11_000, pending_input: false });
    expect(await store.hasOpenWait(s)).toBe(true);
    const w2 = await store.createWait({ id: "w2", sessionId: s, executionId: "e", reason: "r", seconds: null, nowMs: 2000 });
    expect(w2.superseded.map((w) => [w.id, w.state, w.wokenBy])).toEqual([["w1", "superseded", "superseded:w2"]]);
    expect(await store.sessionOpenWaits(s)).toEqual([{ id: "w2", reason: "r", deadline_ms: null }]);
    expect((await store.wakeWaits(s, "input:1", 3000)).map((w) => w.id)).toEqual(["w2"]);
    expect(await store.wakeWait(s, "w2", "again", 3001)).toBeUndefined();
    await store.recordInput({ sessionId: s, source: "operator", receivedAtMs: 3500, payload: { text: "x" }, attention: null });
    const w3 = await store.createWait({ id: "w3", sessionId: s, executionId: "e", reason: "r", seconds: 5, nowMs: 4000 });
    expect(w3.row).toMatchObject({ state: "woken", wokenBy: "pending_input", pendingInput: true });
    await store.createWait({ id: "w4", sessionId: "wt-due", executionId: "e", reason: "r", seconds: 1, nowMs: 0 });
    expect((await store.wakeDueWaits(999)).map((w) => w.id)).not.toContain("w4");
    expect((await store.getWait("w4"))?.state).toBe("waiting");
    // Recovery: the running cell interrupted, the due wait woken, the unanswered request closed, one incident.
    await store.startExecution({ id: "ex-crash", sessionId: "wt-due", generation: "g-1", code: "sleep()", startedAtMs: 1 });
    await store.recordRequest("wt-due", { executionId: "ex-crash", requestId: "q", method: "runtime.wait", request: {}, requestedAtMs: 1 });
    const recovery = await store.recoverAfterCrash(5000);
    expect(recovery.interrupted).toContain("ex-crash");
    expect(recovery.woken.map((w) => w.id)).toContain("w4");
    expect(await store.getExecution("ex-crash")).toMatchObject({ status: "interrupted", endedBy: "host_restart", failure: { reason: "host_died", observed_at_ms: 5000 } });
    expect((await store.hostRequestsOf("ex-crash"))[0]?.reply).toMatchObject({ code: "host_restart", sent: false });
    expect(await store.closeUnansweredRequests(6000)).toEqual([]);
  });

  test("a wait of a fraction of a second keeps its seconds as given (runtime.wait(0.05)): PostgreSQL's bigint once refused it", async (ctx) => {
    const { store } = subject(ctx);
    const w = await store.createWait({ id: "wf", sessionId: "wt-frac", executionId: "e", reason: "r", seconds: 0.05, nowMs: 1000 });
    expect(w.reply).toEqual({ wait_id: "wf", deadline_ms: 1050, pending_input: false });
    expect(await store.getWait("wf")).toMatchObject({ seconds: 0.05, deadlineMs: 1050, state: "waiting" });
  });

  test("blobs and displays: stored once by digest, bytes exact, prefixes resolved, the execution's list written with them", async (ctx) => {
    const { store } = subject(ctx);
    const data = Buffer.from([0, 1, 2, 255, 254, 0x89, 0x50]);
    const digest = blobDigest(data);
    await store.startExecution({ id: "ex-d", sessionId: "dp", generation: "g-1", code: "display()", startedAtMs: 1 });
    const ref = { seq: 0, digest, mimes: ["image/png"], text: "", images: [{ mime: "image/png" as const, digest, width: null, height: null, bytes: data.length }] };
    await store.storeDisplay("dp", "ex-d", { ref, blobs: [{ digest, mediaType: "image/png", data }] }, [ref], 2);
    await store.putBlob({ digest, mediaType: "image/png", data }, 3);
    const row = await store.getBlob(digest);
    expect(row).toMatchObject({ digest, mediaType: "image/png", bytes: data.length, createdAtMs: 2 });
    expect(Buffer.compare(row!.data, data)).toBe(0);
    expect(await store.blobsByPrefix(digest.slice(7, 20))).toEqual([digest]);
    expect((await store.resolveBlob(digest.slice(7, 20))).digest).toBe(digest);
    await expect(store.resolveBlob("sha256:0000000000000000")).rejects.toMatchObject({ code: "DISPLAY_NOT_FOUND" });
    await expect(store.resolveBlob("zz")).rejects.toMatchObject({ code: "DISPLAY_NOT_FOUND" });
    expect((await store.getExecution("ex-d"))?.displays).toEqual([ref]);
    await store.finishExecution("dp", "ex-d", { status: "ok", endedAtMs: 4 });
    const result = await store.cellResult("ex-d", { images: true });
    expect(result?.displays).toEqual([{ text: "", images: [{ mime: "image/png", digest, width: null, height: null, bytes: data.length, base64: data.toString("base64") }] }]);
  });

  test("frontiers: pending until installed with the pin that installs it; older pending ones superseded with it", async (ctx) => {
    const { store } = subject(ctx);
    const s = "fr";
    await store.recordFrontier({ id: "f1", sessionId: s, coversThrough: 3, block: "b1", reason: "selected", executionId: null, createdAtMs: 1 });
    await store.recordFrontier({ id: "f2", sessionId: s, coversThrough: 4, block: "b2", reason: "budget", executionId: null, createdAtMs: 2 });
    expect((await store.pendingFrontier(s))?.id).toBe("f2");
    expect((await store.pendingFrontierOf(s))?.id).toBe("f2");
    const pin = await store.installPin({ sessionId: s, frontierId: "f2", digest: "p", record: { text: "t", digest: "p" }, pinnedAtMs: 5, installedAtMs: 6 });
    expect(await store.pendingFrontier(s)).toBeUndefined();
    expect(await store.installedFrontier(s)).toMatchObject({ id: "f2", headerRecordId: pin, installedAtMs: 6 });
    expect(await store.installedFrontierOf(s)).toMatchObject({ id: "f2", headerRecordId: pin, coversThrough: 4 });
    expect((await store.getFrontier("f1"))?.installedAtMs).toBe(6);
    expect(await store.headerChain(s)).toEqual([{ text: "t", digest: "p" }]);
    expect((await store.headerRows(s)).map((r) => r.type)).toEqual(["header_pin"]);
  });

  test("effects, work items and orientation: identities found again, assessments close items, adoptions replace by target", async (ctx) => {
    const { store } = subject(ctx);
    await store.insertEffect({ id: "fx", sessionId: "wo", executionId: "e1", requestId: "q1", kind: "send", text: "hi", status: "confirmed", createdAtMs: 1 });
    expect((await store.findEffect("e1", "q1"))?.id).toBe("fx");
    expect(await store.getEffect("none")).toBeUndefined();
    await store.insertWorkItem({ id: "wi", sessionId: "wo", executionId: "e1", requestId: "q2", purpose: "p", reason: "r", evidenceRefs: ["a"], createdAtMs: 1 });
    expect((await store.findWorkItemByRequest("e1", "q2"))?.status).toBe("open");
    expect((await store.sessionAgenda("wo")).work_items.map((w) => w.work_item_id)).toEqual(["wi"]);
    expect(await store.recordAssessment({ workItemId: "wi", sessionId: "wo", executionId: "e1", requestId: "q3", outcome: "changed", atMs: 5 })).toMatchObject({ status: "closed", outcome: "changed", closedAtMs: 5 });
    expect(await store.openWorkItems("wo")).toEqual([]);
    const base = { sessionId: "wo", executionId: "e1", target: "persona", text: "be kind", digest: "d1", stagedAtMs: 1 };
    await store.insertCandidate({ ...base, id: "c1", requestId: "q4", scopeKind: "global", scopeSessionId: null });
    await store.insertCandidate({ ...base, id: "c2", requestId: "q5", scopeKind: "session", scopeSessionId: "wo", stagedAtMs: 2, text: "be brief", digest: "d2" });
    expect((await store.stagedCandidates("wo")).map((c) => c.id)).toEqual(["c1", "c2"]);
    const adoption = { candidateId: "c1", target: "persona", scopeKind: "global" as const, scopeSessionId: null, sessionId: "wo", executionId: "e1", requestId: "q6", step: 1, reply: { ok: true }, adoptedAtMs: 3 };
    const a1 = await store.insertAdoption({ ...adoption, operationId: "op1" });
    await store.markAdopted("c1");
    await store.setAdoptionReply(a1.id, { ok: true, n: 1 });
    expect((await store.findAdoption("op1"))?.reply).toEqual({ ok: true, n: 1 });
    await store.insertAdoption({ ...adoption, operationId: "op2", candidateId: "c2", scopeKind: "session", scopeSessionId: "wo" });
    expect((await store.currentSources({ kind: "global" })).map((x) => [x.target, x.text])).toEqual([["persona", "be kind"]]);
    expect((await store.currentSources({ kind: "session", session_id: "wo" })).map((x) => x.candidate_id)).toEqual(["c2"]);
    expect(await store.adoptedScopes()).toEqual([{ kind: "global" }, { kind: "session", session_id: "wo" }]);
    expect(await store.adoptionMark()).toBeGreaterThan(a1.id);
  });

  test("a send, an origination and an assessment: each one transaction, a raced retry finds the first, a refusal writes nothing", async (ctx) => {
    const { store } = subject(ctx);
    const send = (id: string, requestId: string, status: "confirmed" | "held") => ({ id, sessionId: "tx", executionId: "e-tx", requestId, kind: "local.send", text: "hi", status, reason: null, createdAtMs: 7 });
    const sent = await store.recordSend(send("fx-a", "q1", "confirmed"), { text: "hi" }, () => undefined);
    expect(sent).toMatchObject({ id: "fx-a", status: "confirmed" });
    expect(await store.getEvent(sent.eventId!)).toMatchObject({ sessionId: "tx", direction: "out", effectId: "fx-a", payload: { text: "hi" }, receivedAtMs: 7 });
    // Two sends of one request identity at once: one effect, both answered with it, no second event.
    const [x, y] = await Promise.all([store.recordSend(send("fx-b", "q2", "confirmed"), { text: "hi" }, () => undefined), store.recordSend(send("fx-c", "q2", "confirmed"), { text: "hi" }, () => undefined)]);
    expect(x.id).toBe(y.id);
    expect(x.eventId).toBe(y.eventId);
    // A raced retry returns the first without asking the check; a held send makes no event.
    expect(await store.recordSend(send("fx-d", "q1", "confirmed"), { text: "hi" }, () => { throw new Error("not asked"); })).toMatchObject({ id: "fx-a" });
    expect(await store.recordSend(send("fx-e", "q3", "held"), null, () => undefined)).toMatchObject({ id: "fx-e", status: "held", eventId: null });
    await expect(store.recordSend(send("fx-f", "q4", "confirmed"), { text: "hi" }, () => { throw new Error("scope"); })).rejects.toThrow("scope");
    expect(await store.findEffect("e-tx", "q4")).toBeUndefined();
    expect((await store.pendingInputs("tx")).length).toBe(0);

    const item = { sessionId: "tx", executionId: "e-tx", requestId: "q5", purpose: "p", reason: "r", evidenceRefs: [], createdAtMs: 1 };
    const [o1, o2] = await Promise.all([store.originateWorkItem({ ...item, id: "wi-a" }), store.originateWorkItem({ ...item, id: "wi-b" })]);
    expect([o1.row.id, o2.row.id]).toEqual([o1.row.id, o1.row.id]);
    expect([o1.created, o2.created].sort()).toEqual([false, true]);
    const seen: unknown[] = [];
    const assess = (outcome: "deferred" | "changed", requestId: string) =>
      store.assessWorkItem({ workItemId: o1.row.id, sessionId: "tx", executionId: "e-tx", requestId, outcome, atMs: 9 }, (row) => {
        seen.push(row?.status);
        if (row?.status === "closed") throw new Error("closed");
      });
    expect(await assess("deferred", "q6")).toMatchObject({ status: "open", outcome: "deferred" });
    // Of two closing at once, the second sees the first's outcome.
    const both = await Promise.allSettled([assess("changed", "q7"), assess("changed", "q8")]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(seen).toEqual(["open", "open", "closed"]);
    await expect(store.assessWorkItem({ workItemId: "none", sessionId: "tx", executionId: "e-tx", requestId: "q9", outcome: "changed", atMs: 9 }, (row) => {
      if (!row) throw new Error("no item");
    })).rejects.toThrow("no item");
  });

  test("header observation: the plan reads the chain with the adopted sources; observations at once append once; a current header writes nothing", async (ctx) => {
    const { store } = subject(ctx);
    const s = "obs";
    await store.insertCandidate({ id: "c-obs", sessionId: s, executionId: "e", requestId: "q-obs", target: "style", text: "terse", digest: "do", stagedAtMs: 1, scopeKind: "session", scopeSessionId: s });
    await store.insertAdoption({ operationId: "op-obs", candidateId: "c-obs", target: "style", scopeKind: "session", scopeSessionId: s, sessionId: s, executionId: "e", requestId: "q-obs2", step: 1, reply: {}, adoptedAtMs: 2 });
    const global = await store.currentSources({ kind: "global" });
    const seen: Array<{ links: number; own: string[]; global: number }> = [];
    // Pin when there is no header yet, from the adopted sources the plan is given.
    const pinIfNone: HeaderPlan<number> = (chain, adopted) => {
      seen.push({ links: chain.length, own: adopted.own.map((x) => x.text), global: adopted.global.length });
      const text = adopted.own.map((x) => x.text).join("");
      return { append: chain.length === 0 ? { type: "header_pin", digest: "pd", record: { text, digest: "pd" } } : null, result: chain.length };
    };
    const results = await Promise.all([1, 2, 3].map(() => store.observeHeader(s, pinIfNone, 10)));
    // One pin landed; the observations that came second read it (under the write, where they had read none before).
    expect(await store.headerChain(s)).toEqual([{ text: "terse", digest: "pd" }]);
    expect(results.filter((r) => r === 0)).toHaveLength(1);
    expect(seen.every((x) => x.own.join() === "terse" && x.global === global.length)).toBe(true);
    const asked = seen.length;
    expect(await store.observeHeader(s, pinIfNone, 11)).toBe(1);
    expect(seen.length).toBe(asked + 1);
    expect((await store.headerRows(s)).map((r) => [r.type, r.digest])).toEqual([["header_pin", "pd"]]);
  });

  test("orientation: a staging repeated or refused, an adoption recorded with its session's header revision in one write, answered again by its operation id", async (ctx) => {
    const { store } = subject(ctx);
    const s = "ad";
    const cand = { id: "c-ad", sessionId: s, executionId: "e", requestId: "q", target: "tone", text: "calm", digest: "dc", stagedAtMs: 1, scopeKind: "session" as const, scopeSessionId: s };
    expect(await store.stageCandidate(cand, () => undefined)).toMatchObject({ created: true, row: { id: "c-ad", status: "staged" } });
    expect(await store.stageCandidate({ ...cand, text: "other" }, (existing) => expect(existing.text).toBe("calm"))).toMatchObject({ created: false, row: { text: "calm" } });
    await expect(store.stageCandidate({ ...cand, id: "c-ad2" }, () => undefined).then(() => store.stageCandidate({ ...cand, id: "c-ad2" }, () => { throw new Error("conflict"); }))).rejects.toThrow("conflict");
    await store.appendHeaderRecord({ sessionId: s, type: "header_pin", digest: "p0", record: { text: "", digest: "p0" }, atMs: 1 });
    const seen: Array<{ links: number; own: string[] }> = [];
    const rules = {
      repeat: (done: { candidateId: string }) => expect(done.candidateId).toBe("c-ad"),
      candidate: (c: { id: string } | undefined) => {
        if (!c) throw new Error("none");
      },
      // The plan sees the chain and the sources with this adoption in them; it appends a revision.
      header: (chain: unknown[], adopted: { own: Array<{ text: string }> }) => {
        seen.push({ links: chain.length, own: adopted.own.map((x) => x.text) });
        return { append: { type: "header_revision" as const, digest: "r1", record: { digest: "r1" } }, result: "r1" };
      },
      reply: (c: { target: string }, digest: string | null) => ({ target: c.target, header_digest: digest }),
    };
    const adoption = { operationId: "op-ad", candidateId: "c-ad", sessionId: s, executionId: "e", requestId: "q2", step: 2, adoptedAtMs: 3 };
    expect(await store.adoptCandidate(adoption, rules, 4)).toEqual({ target: "tone", header_digest: "r1" });
    expect(seen).toEqual([{ links: 1, own: ["calm"] }]);
    expect((await store.getCandidate("c-ad"))!.status).toBe("adopted");
    expect(await store.findAdoption("op-ad")).toMatchObject({ step: 2, target: "tone", scopeKind: "session", scopeSessionId: s, reply: { target: "tone", header_digest: "r1" } });
    expect((await store.headerRows(s)).map((r) => [r.type, r.digest])).toEqual([["header_pin", "p0"], ["header_revision", "r1"]]);
    // Again by its operation id: the recorded reply, nothing observed or written again.
    expect(await store.adoptCandidate(adoption, rules, 5)).toEqual({ target: "tone", header_digest: "r1" });
    expect(seen).toHaveLength(1);
    // A refusal writes nothing.
    await expect(store.adoptCandidate({ ...adoption, operationId: "op-none", candidateId: "none" }, rules, 6)).rejects.toThrow("none");
    expect(await store.findAdoption("op-none")).toBeUndefined();
    expect(await store.headerRows(s)).toHaveLength(2);
  });

  test("peers and peer requests: open, ask, answer once, cancel pending ones at stop, counted per peer", async (ctx) => {
    const { store } = subject(ctx);
    await store.insertPeer({ id: "p1", sessionId: "peer-s", openerSessionId: "op-s", openerExecutionId: "e", mode: "m", evidence: [], openedAtMs: 1 });
    expect((await store.peerOfSession("peer-s"))?.id).toBe("p1");
    expect(await store.countLivePeers()).toBeGreaterThanOrEqual(1);
    const base = { peerId: "p1", fromSessionId: "op-s", toSessionId: "peer-s", content: "q?", evidence: [], eventId: 1, sentByExecutionId: "e", sentAtMs: 10 };
    const r1 = await store.insertPeerRequest({ ...base, requestId: "pr1" });
    const r2 = await store.insertPeerRequest({ ...base, requestId: "pr2" });
    expect((await store.openPeerRequests("op-s")).outgoing.map((r) => r.request_id)).toEqual(["pr1", "pr2"]);
    expect((await store.openPeerRequests("peer-s")).incoming.map((r) => r.request_id)).toEqual(["pr1", "pr2"]);
    expect(await store.answerRequest(r1.id, { result: { a: 1 }, executionId: "pe", atMs: 20 })).toMatchObject({ status: "answered", result: { a: 1 } });
    expect(await store.answerRequest(r1.id, { result: { a: 2 }, executionId: "pe", atMs: 21 })).toBeUndefined();
    await store.setResultEvent(r1.id, 77);
    expect((await store.sentRequest("op-s", "pr1"))?.resultEventId).toBe(77);
    expect((await store.receivedRequest("peer-s", "pr2"))?.id).toBe(r2.id);
    expect(await store.peerCausesOf("peer-s", 0, 100)).toEqual(["e", "e"]);
    expect(await store.beginStop("p1", { drain: true, atMs: 30 })).toMatchObject({ status: "stopping", stopDrain: true });
    expect((await store.cancelPendingOfPeer("p1", { executionId: null, atMs: 31 })).map((r) => r.requestId)).toEqual(["pr2"]);
    expect(await store.peerView((await store.getPeer("p1"))!)).toMatchObject({ peer_id: "p1", status: "stopping", requests: { pending: 0, answered: 1, cancelled: 1 } });
    expect((await store.stoppingPeers()).map((p) => p.id)).toEqual(["p1"]);
    expect(await store.finishStop("p1", "drain", 40)).toMatchObject({ status: "stopped", stoppedBy: "drain" });
    expect(await store.stoppedPeerSessions()).toContain("peer-s");
    expect((await store.peersOpenedBy("op-s")).map((p) => p.id)).toEqual(["p1"]);
  });

  test("peer exchanges: open under the cap, a send admitted and woken once, answered once, declined by the peer, stopped with its pending requests", async (ctx) => {
    const { store } = subject(ctx);
    const counts: number[] = [];
    const peer = await store.openPeer({ id: "px", sessionId: "px-s", openerSessionId: "px-o", openerExecutionId: "e", mode: "independent", evidence: [], openedAtMs: 1 }, (n) => void counts.push(n));
    expect(peer).toMatchObject({ id: "px", status: "open" });
    await expect(store.openPeer({ id: "px2", sessionId: "px2-s", openerSessionId: "px-o", openerExecutionId: "e", mode: "independent", evidence: [], openedAtMs: 1 }, () => { throw new Error("cap"); })).rejects.toThrow("cap");
    expect(await store.getPeer("px2")).toBeUndefined();
    await store.createWait({ id: "w-px", sessionId: "px-s", executionId: "e-peer", reason: "r", seconds: null, nowMs: 1 });
    const input = (text: string) => ({ payload: { text }, attention: { forced: true } });
    const send = (requestId: string) =>
      store.sendPeerRequest(
        { requestId, peerId: "px", fromSessionId: "px-o", content: "q?", evidence: [], sentByExecutionId: "e", sentAtMs: 2 },
        { repeat: () => undefined, peer: (p) => expect(p?.id).toBe("px"), input: () => input("q?") },
      );
    // Two sends of one identity at once: one request, one input, the wait woken once.
    const [a, b] = await Promise.all([send("r1"), send("r1")]);
    expect(a.row.id).toBe(b.row.id);
    const admitted = [a, b].flatMap((x) => (x.admitted ? [x.admitted] : []));
    expect(admitted).toHaveLength(1);
    expect(admitted[0]!.event).toMatchObject({ sessionId: "px-s", source: "peer", payload: { text: "q?" }, attention: { forced: true } });
    expect(admitted[0]!.woken.map((w) => [w.id, w.wokenBy])).toEqual([["w-px", `event:${admitted[0]!.event.id}`]]);
    expect(a.row).toMatchObject({ toSessionId: "px-s", eventId: admitted[0]!.event.id, status: "pending" });
    const answered = await store.answerPeerRequest({ toSessionId: "px-s", requestId: "r1", result: { ok: 1 }, executionId: "e-peer", atMs: 3 }, { check: (r) => expect(r?.status).toBe("pending"), input: (r) => input(`answer to ${r.requestId}`) });
    expect(answered.row).toMatchObject({ status: "answered", result: { ok: 1 }, resultEventId: answered.admitted.event.id });
    expect(answered.admitted.event).toMatchObject({ sessionId: "px-o", payload: { text: "answer to r1" } });
    await expect(store.answerPeerRequest({ toSessionId: "px-s", requestId: "r1", result: {}, executionId: "e-peer", atMs: 4 }, { check: (r) => { if (r?.status !== "pending") throw new Error("answered"); }, input: () => input("x") })).rejects.toThrow("answered");
    // Declined by the peer: the opener is told; cancelled again: answered as it is.
    await send("r2");
    const rules = { check: (r: { status: string } | undefined) => r!.status !== "cancelled", scope: () => undefined, input: () => input("cancelled") };
    const declined = await store.cancelPeerRequest({ sessionId: "px-s", requestId: "r2", executionId: "e-peer", atMs: 5 }, rules);
    expect(declined.row).toMatchObject({ status: "cancelled", cancelledBy: "peer" });
    expect(declined.admitted?.event).toMatchObject({ sessionId: "px-o", payload: { text: "cancelled" } });
    expect((await store.cancelPeerRequest({ sessionId: "px-s", requestId: "r2", executionId: "e-peer", atMs: 6 }, rules)).admitted).toBeNull();
    // Withdrawn by the opener: nothing for anyone.
    await send("r3");
    const withdrawn = await store.cancelPeerRequest({ sessionId: "px-o", requestId: "r3", executionId: "e", atMs: 7 }, rules);
    expect([withdrawn.row.cancelledBy, withdrawn.admitted]).toEqual(["opener", null]);
    await send("r4");
    await expect(store.stopPeer("px", { drain: true, executionId: "e", atMs: 8 }, () => { throw new Error("scope"); })).rejects.toThrow("scope");
    expect((await store.getPeer("px"))!.status).toBe("open");
    expect((await store.stopPeer("px", { drain: true, executionId: "e", atMs: 8 }, () => undefined)).map((r) => r.requestId)).toEqual(["r4"]);
    expect((await store.getPeer("px"))!.status).toBe("stopping");
    expect(await store.stopPeer("px", { drain: false, executionId: "e", atMs: 9 }, () => undefined)).toEqual([]);
    expect(await store.getPeer("px")).toMatchObject({ status: "stopped", stoppedBy: "hard" });
  });

  test("remote namespaces: one open per session and target, generations and operations closed once, recovered after a crash", async (ctx) => {
    const { store } = subject(ctx);
    await store.insertNamespace({ id: "ns1", sessionId: "rm", target: "box", openedByExecutionId: "e", openedAtMs: 1 });
    expect((await store.openNamespace("rm", "box"))?.id).toBe("ns1");
    await store.insertGeneration({ namespaceId: "ns1", generation: "g-1", target: "box", remotePid: 7, localPid: 8, runtimeDigest: "rd", runtimeCopied: true, python: "3.11", startedAtMs: 2 });
    await store.insertOperation({ namespaceId: "ns1", generation: "g-1", operationId: "o1", operation: "exec", code: "1", executionId: "e", startedAtMs: 3 });
    await store.finishOperation("ns1", "o1", { status: "ok", completion: { kind: "ok" }, endedBy: null, atMs: 4 });
    await store.finishOperation("ns1", "o1", { status: "failed", completion: { kind: "failed" }, endedBy: "x", atMs: 5 });
    expect(await store.getOperation("ns1", "o1")).toMatchObject({ status: "ok", completion: { kind: "ok" }, endedAtMs: 4 });
    await store.insertOperation({ namespaceId: "ns1", generation: "g-1", operationId: "o2", operation: "exec", code: "2", executionId: "e", startedAtMs: 6 });
    expect(await store.recoverRemote(7)).toEqual({ generations: 1, operations: 1 });
    expect((await store.latestGeneration("ns1"))?.endReason).toBe("host_restart");
    expect(await store.closeNamespace("ns1", "closed", 8)).toBe(true);
    expect(await store.closeNamespace("ns1", "closed", 9)).toBe(false);
    expect((await store.openNamespaces()).map((n) => n.id)).not.toContain("ns1");
    // A first generation with its namespace, a later one alone, and a close of both in one write.
    const gen = (g: string, at: number) => ({ namespaceId: "ns2", generation: g, target: "box", remotePid: 7, localPid: 8, runtimeDigest: "rd", runtimeCopied: false, python: "3.11", startedAtMs: at });
    expect(await store.recordGeneration({ id: "ns2", sessionId: "rm", target: "box", openedByExecutionId: "e", openedAtMs: 10 }, gen("g-1", 10))).toMatchObject({ generation: "g-1" });
    expect((await store.openNamespace("rm", "box"))?.id).toBe("ns2");
    await store.recordGeneration(null, gen("g-2", 11));
    expect((await store.latestGeneration("ns2"))?.generation).toBe("g-2");
    await expect(store.recordGeneration({ id: "ns2", sessionId: "rm", target: "box", openedByExecutionId: "e", openedAtMs: 12 }, gen("g-3", 12))).rejects.toThrow();
    expect((await store.latestGeneration("ns2"))?.generation).toBe("g-2");
    await store.closeWithGeneration("ns2", "g-2", "ex-close", 13);
    expect(await store.latestGeneration("ns2")).toMatchObject({ generation: "g-2", endReason: "closed", endedAtMs: 13 });
    expect(await store.getNamespace("ns2")).toMatchObject({ status: "closed", closedBy: "ex-close", closedAtMs: 13 });
  });

  test("a session taken over: its running cells failed host_lost, their unanswered requests and its running model requests closed, one incident; other sessions untouched", async (ctx) => {
    const { store } = subject(ctx);
    const s = "taken";
    await store.startExecution({ id: "ex-taken", sessionId: s, generation: "g-1", code: "x", startedAtMs: 1 });
    await store.startExecution({ id: "ex-other", sessionId: "not-taken", generation: "g-1", code: "x", startedAtMs: 1 });
    const asked = await store.recordRequest(s, { executionId: "ex-taken", requestId: "rq", method: "runtime.inspect", request: {}, requestedAtMs: 2 });
    const pin = await store.appendHeaderRecord({ sessionId: s, type: "header_pin", digest: "p", record: { text: "", digest: "p" }, atMs: 1 });
    await store.startModelRequest(request(s, "mr-taken", pin));
    const previous = { hostId: "gone-host", epoch: 4 };
    expect(await store.recoverSession(s, previous, "host_failover", 50)).toEqual({ lost: ["ex-taken"], requests: ["mr-taken"], unanswered: [asked] });
    expect(await store.getExecution("ex-taken")).toMatchObject({ status: "failed", error: "host_lost", endedBy: "host_lost", endedAtMs: 50, failure: { reason: "host_lost", host_id: "gone-host", epoch: 4 } });
    expect((await store.getExecution("ex-other"))!.status).toBe("running");
    expect((await store.hostRequestsOf("ex-taken"))[0]).toMatchObject({ reply: { kind: "error", code: "host_lost", sent: false }, repliedAtMs: 50 });
    expect(await store.modelRequestById("mr-taken")).toMatchObject({ status: "error", error: { code: "host_failover" }, endedAtMs: 50 });
    // Nothing left: a restart's takeover says nothing, a failover's still says it happened.
    expect(await store.recoverSession(s, previous, "host_restart", 51)).toEqual({ lost: [], requests: [], unanswered: [] });
    expect(await store.recoverSession(s, previous, "host_failover", 52)).toEqual({ lost: [], requests: [], unanswered: [] });
  });

  test("fencing: with the lease's key a session's writes land; after another host takes the lease they fail with LEASE_LOST and write nothing", async (ctx) => {
    const { store, leases, fence } = subject(ctx);
    expect(store.dialect).toBe(dialect);
    const s = "fenced";
    const mine = (await leases.claim(s, "host-a", 60_000))!;
    fence.keys.set(s, { sessionId: s, hostId: "host-a", epoch: mine.epoch });
    await store.recordInput({ sessionId: s, source: "operator", receivedAtMs: 1, payload: { text: "ok" }, attention: null });
    await leases.release({ sessionId: s, hostId: "host-a", epoch: mine.epoch });
    const theirs = (await leases.claim(s, "host-b", 60_000))!;
    expect(theirs.epoch).toBe(mine.epoch + 1);
    const writes: Array<() => Promise<unknown>> = [
      () => store.recordInput({ sessionId: s, source: "operator", receivedAtMs: 2, payload: { text: "stale" }, attention: null }),
      () => store.startExecution({ id: "ex-stale", sessionId: s, generation: "g-1", code: "x", startedAtMs: 2 }),
      () => store.appendTranscript({ sessionId: s, kind: "input", ref: "1", atMs: 2 }),
      () => store.createWait({ id: "w-stale", sessionId: s, executionId: "e", reason: "r", seconds: 1, nowMs: 2 }),
      () => store.commitModelReply(s, "none", { reply: {}, responseModel: null, usage: null, retries: 0, endedAtMs: 2 }),
    ];
    for (const write of writes) await expect(write()).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect((await store.pendingInputs(s)).map((e) => e.payload)).toEqual([{ text: "ok" }]);
    expect(await store.getExecution("ex-stale")).toBeUndefined();
    expect(await store.getWait("w-stale")).toBeUndefined();
    expect(await store.lastSeq(s)).toBe(0);
    // Unfenced sessions (no key) write as before.
    await store.recordInput({ sessionId: "free", source: "operator", receivedAtMs: 1, payload: { text: "free" }, attention: null });
    expect((await store.pendingInputs("free")).length).toBe(1);
  });
});
