import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../../test/request-context";
import type { LeaseKey } from "../leases";
import { sqliteLeases } from "../leases";
import { sqliteStore, type SqliteStore } from "./index";

let m: ReturnType<typeof memoryDb>;
let keys: Map<string, LeaseKey>;
let store: SqliteStore;
beforeEach(() => {
  m = memoryDb();
  keys = new Map();
  store = sqliteStore(m.db, m.sqlite, { keyFor: (sessionId) => keys.get(sessionId) ?? null });
});
afterEach(() => m.sqlite.close());

const cell = (sessionId: string, id: string) => store.startExecution({ id, sessionId, generation: "g1", code: "1+1", startedAtMs: T0 });

describe("SqliteStore without a lease (one host)", () => {
  test("a turn's records read back in their order", async () => {
    await store.startModelRequest({ id: "mr1", sessionId: "s1", turnId: "t1", route: "r", api: "openai", model: "m", profile: { name: "r" }, headerRecordId: 1, frontierId: null, throughSeq: 0, bodyDigest: "d", bodyBytes: 1, sharedPrefixBytes: 0, startedAtMs: T0 });
    const replySeq = await store.commitModelReply("s1", "mr1", { reply: { text: "hi", calls: [] }, responseModel: null, usage: null, retries: 0, endedAtMs: T0 + 1 });
    const cellSeq = await store.appendTranscript({ sessionId: "s1", kind: "cell", ref: "ex1", requestId: "mr1", callId: "c1", atMs: T0 + 2 });
    expect(cellSeq).toBeGreaterThan(replySeq);
    expect((await store.sessionModelRequests("s1"))[0]).toMatchObject({ id: "mr1", status: "ok", profile: { name: "r" }, reply: { text: "hi", calls: [] } });
    expect(await store.lastReply("s1")).toEqual({ requestId: "mr1", reply: { text: "hi", calls: [] }, answers: [{ kind: "cell", ref: "ex1", callId: "c1", executionStatus: null }] });
    await cell("s1", "ex1");
    expect((await store.lastReply("s1"))!.answers[0]!.executionStatus).toBe("running");
  });

  test("an execution opens before it closes, and closes once", async () => {
    await cell("s1", "ex1");
    expect(await store.runningExecutions()).toHaveLength(1);
    await store.finishExecution("s1", "ex1", { status: "ok", endedAtMs: T0 + 5 });
    expect(await store.getExecution("ex1")).toMatchObject({ status: "ok", endedAtMs: T0 + 5 });
    expect(await store.runningExecutions()).toHaveLength(0);
  });
});

describe("SqliteStore fenced by a lease (C21)", () => {
  const leases = () => sqliteLeases(m.db, m.sqlite);

  test("the holder writes; a stale key writes nothing and gets LEASE_LOST", async () => {
    // h1 claims for 0 ms (expired at once), h2 takes the session over at epoch 2.
    const stale = (await leases().claim("s1", "h1", 0))!;
    const held = (await leases().claim("s1", "h2", 60_000))!;
    expect(held.epoch).toBe(stale.epoch + 1);
    keys.set("s1", stale);
    await expect(store.appendTranscript({ sessionId: "s1", kind: "input", ref: "1", atMs: T0 })).rejects.toMatchObject({ code: "LEASE_LOST" });
    await expect(cell("s1", "ex1")).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await store.lastSeq("s1")).toBe(0);
    expect(await store.getExecution("ex1")).toBeUndefined();
    keys.set("s1", held);
    expect(await store.appendTranscript({ sessionId: "s1", kind: "input", ref: "1", atMs: T0 })).toBeGreaterThan(0);
    expect(await store.lastSeq("s1")).toBeGreaterThan(0);
  });

  test("a transaction under a lost lease writes none of its records", async () => {
    const key = (await leases().claim("s1", "h1", 60_000))!;
    keys.set("s1", key);
    await store.startModelRequest({ id: "mr1", sessionId: "s1", turnId: "t1", route: "r", api: "openai", model: "m", profile: {}, headerRecordId: 1, frontierId: null, throughSeq: 0, bodyDigest: "d", bodyBytes: 1, sharedPrefixBytes: 0, startedAtMs: T0 });
    expect(await leases().release(key)).toBe(true);
    await expect(store.commitModelReply("s1", "mr1", { reply: { text: "x", calls: [] }, responseModel: null, usage: null, retries: 0, endedAtMs: T0 + 1 })).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect((await store.sessionModelRequests("s1"))[0]!.status).toBe("running");
    expect(await store.lastReply("s1")).toBeNull();
  });

  test("only the fenced session is refused: another session without a key writes as today", async () => {
    keys.set("s1", { sessionId: "s1", hostId: "h1", epoch: 7 });
    await expect(cell("s1", "ex1")).rejects.toMatchObject({ code: "LEASE_LOST" });
    await cell("s2", "ex2");
    expect(await store.getExecution("ex2")).toMatchObject({ sessionId: "s2", status: "running" });
  });
});
