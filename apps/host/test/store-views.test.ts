// The read views' contract (C21, C23): the same records written through SqliteStore and PgStore,
// and every view `klbr log`, `klbr web` and `display get` read answers the same on both: the log
// and its follower, the sessions, a session's requests, cells and frontiers, a cell, an image, a
// request's messages.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import type { Store } from "../src/store/api";
import { blobDigest } from "../src/store/blobs";
import { pgLeases, sqliteLeases, type LeaseStore } from "../src/store/leases";
import type { LogEntry } from "../src/store/log-view";
import { pgStore } from "../src/store/pg";
import { sqliteStore } from "../src/store/sqlite";
import { tempDir } from "./helpers";

const dir = tempDir("klbr-views-");
let pgDb: Awaited<ReturnType<typeof testDatabase>>;
let lite: { store: Store; leases: LeaseStore<unknown>; close(): Promise<void> };
let pg: { store: Store; leases: LeaseStore<unknown>; close(): Promise<void> } | null = null;

beforeAll(async () => {
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const db = migrateHostDb(sqlite);
  lite = { store: sqliteStore(db, sqlite), leases: sqliteLeases(db, sqlite) as LeaseStore<unknown>, close: async () => void sqlite.close() };
  pgDb = await testDatabase();
  if (pgDb.skip) return;
  const host = openPostgres(pgDb.url!, { max: 4 });
  await migratePostgres(host.pool);
  const store = pgStore(host);
  pg = { store, leases: pgLeases(host.db) as LeaseStore<unknown>, close: () => store.close() };
});
afterAll(async () => {
  await lite?.close();
  await pg?.close();
  await pgDb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const profile = { name: "paid", api: "openai", base_url: "http://127.0.0.1:1", model: "m" };
const prices = new Map([["paid", { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }]]);
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
const pngDigest = blobDigest(png);
const usage = (prompt: number, completion: number, cached: number) =>
  ({ shape: "openai", raw: [{ prompt_tokens: prompt }], flags: [], prompt_tokens: prompt, completion_tokens: completion, cached_prompt_tokens: cached }) as never;

/** Two sessions' worth of records of every kind the views read, at distinct times, in one order. */
async function writeRecords(store: Store, leases: LeaseStore<unknown>): Promise<{ hostRequest: number }> {
  let now = 1000;
  const t = () => (now += 7);
  const s = "views-a";
  await leases.claim(s, "host-a", 600_000);
  await store.recordKernelReset({ sessionId: s, generation: "g-1", skillsRevision: "r1", pid: 42, reason: "start", atMs: t() });
  const pin = await store.appendHeaderRecord({ sessionId: s, type: "header_pin", digest: "p1", record: { text: "be brief", digest: "p1", reason: "start", pinned_at_ms: now }, atMs: t() });
  await store.recordInput({ sessionId: s, source: "operator", receivedAtMs: t(), payload: { text: "add", extra: [1, { k: "v" }] }, attention: { effective: { action: "wake" } } });
  await store.transcribeNew(s, pin, t);
  const request = (id: string, throughSeq: number) => ({ id, sessionId: s, turnId: `turn-${id}`, route: "paid", api: "openai", model: "m", profile, headerRecordId: pin, frontierId: null, throughSeq, bodyDigest: `d-${id}`, bodyBytes: 100, sharedPrefixBytes: 10, startedAtMs: t() });
  await store.startModelRequest(request("mr-1", await store.lastSeq(s)));
  const reply = { text: "", calls: [{ id: "c1", name: "python", arguments: '{"code":"1+1"}' }], stop: "tool_calls" };
  await store.commitModelReply(s, "mr-1", { reply, responseModel: "m-2024", usage: usage(1000, 50, 400), retries: 1, endedAtMs: t() });
  await store.startExecution({ id: "ex-1", sessionId: s, generation: "g-1", code: "1+1", startedAtMs: t(), origin: "model" });
  await store.appendTranscript({ sessionId: s, kind: "cell", ref: "ex-1", requestId: "mr-1", callId: "c1", atMs: now });
  const hostRequest = await store.recordRequest(s, { executionId: "ex-1", requestId: "q1", method: "send", request: { text: "hi" }, requestedAtMs: t() });
  await store.insertEffect({ id: "fx-1", sessionId: s, executionId: "ex-1", requestId: "q1", kind: "send", text: "hi", status: "confirmed", createdAtMs: t() });
  await store.recordOutbound({ sessionId: s, text: "hi", effectId: "fx-1", atMs: t() });
  const ref = { seq: 0, digest: pngDigest, mimes: ["image/png"], text: "a plot", images: [{ mime: "image/png" as const, digest: pngDigest, width: 2, height: 1, bytes: png.length }] };
  await store.storeDisplay(s, "ex-1", { ref, blobs: [{ digest: pngDigest, mediaType: "image/png", data: png }] }, [ref], t());
  await store.finishExecution(s, "ex-1", { status: "ok", output: [{ stream: "stdout", text: "2\n" }], endedAtMs: t(), cpuMs: 3, peakRssBytes: 4096, displaysDropped: 0 });
  await store.startModelRequest(request("mr-2", await store.lastSeq(s)));
  await store.failModelRequest(s, "mr-2", { code: "route_failed", message: "503", status: 503, retries: 2, endedAtMs: t() });
  await store.recordFrontier({ id: "f-1", sessionId: s, coversThrough: 2, block: "summary", reason: "selected", executionId: "ex-1", createdAtMs: t() });
  await store.createWait({ id: "w-1", sessionId: s, executionId: "ex-1", reason: "sleep", seconds: 30, nowMs: t() });
  // Still open when written: a running cell, an unanswered host request, a running request of another session.
  await store.startExecution({ id: "ex-2", sessionId: s, generation: "g-1", code: "while True: pass", startedAtMs: t(), origin: "exec" });
  await store.recordIncident("worker_lost", { pid: 7 }, t());
  const b = "views-b";
  await store.recordInput({ sessionId: b, source: "peer:p", receivedAtMs: t(), payload: { text: "ping" }, attention: null });
  await store.startModelRequest({ ...request("mr-b", 0), sessionId: b });
  return { hostRequest };
}

/** What the follower learns after the first poll: rows closed, rows added. */
async function writeMore(store: Store, hostRequest: number): Promise<void> {
  await store.recordReply("views-a", hostRequest, { kind: "ok", value: 1 }, 5000);
  await store.finishExecution("views-a", "ex-2", { status: "interrupted", endedBy: "sigint", endedAtMs: 5001 });
  await store.recordInput({ sessionId: "views-b", source: "operator", receivedAtMs: 5002, payload: { text: "later" }, attention: null });
}

/** The entries' keys (ids in them agree: both databases number from 1, written in one order). */
const keys = (entries: LogEntry[]) => entries.map((e) => e.key);

describe("the read views answer the same on SQLite and PostgreSQL", () => {
  let written: { lite: { hostRequest: number }; pg: { hostRequest: number } } | null = null;
  const both = async (ctx: { skip(reason: string): never }) => {
    if (!pg) return ctx.skip(pgDb.skip ?? "no PostgreSQL");
    written ??= { lite: await writeRecords(lite.store, lite.leases), pg: await writeRecords(pg.store, pg.leases) };
    return { a: lite.store, b: pg.store };
  };

  test("the log, entry for entry, and its follower: the same first poll, the same rows after writes that close open rows", async (ctx) => {
    const { a, b } = await both(ctx);
    const log = await a.readLog();
    expect(log.length).toBeGreaterThan(12);
    expect(await b.readLog()).toEqual(log);
    const [fa, fb] = [await a.followLog(), await b.followLog()];
    expect(await fb.poll()).toEqual(await fa.poll());
    // Nothing written: both answer only the rows still open, as they are.
    const idle = await fa.poll();
    expect(idle.map((e) => e.kind).sort()).toEqual(["execution", "frontier", "model.request", "request", "wait"]);
    expect(await fb.poll()).toEqual(idle);
    await writeMore(a, written!.lite.hostRequest);
    await writeMore(b, written!.pg.hostRequest);
    const after = await fa.poll();
    expect(keys(after)).toEqual(expect.arrayContaining(["execution:ex-2:interrupted", `request:${written!.lite.hostRequest}:replied`]));
    expect(await fb.poll()).toEqual(after);
    expect(await b.readLog()).toEqual(await a.readLog());
  });

  test("sessions, a session's summary and pages, cells, frontiers, images and a request's messages", async (ctx) => {
    const { a, b } = await both(ctx);
    const sessions = await a.listSessions(prices);
    expect(sessions.map((s) => s.session_id)).toEqual(expect.arrayContaining(["views-a", "views-b"]));
    expect(sessions.find((s) => s.session_id === "views-a")).toMatchObject({ holder_host: "host-a", requests: 2, prompt_tokens: 1000, cached_prompt_tokens: 400 });
    expect(sessions.find((s) => s.session_id === "views-a")!.cost_usd).toBeGreaterThan(0);
    expect(await b.listSessions(prices)).toEqual(sessions);
    for (const id of ["views-a", "views-b", "nobody"]) expect(await b.sessionSummary(id, prices)).toEqual(await a.sessionSummary(id, prices));
    for (const opts of [{}, { page: 1, pageSize: 1 }, { page: 2, pageSize: 1 }]) {
      const requests = await a.requestPage("views-a", prices, opts);
      expect(await b.requestPage("views-a", prices, opts)).toEqual(requests);
      const cells = await a.cellPage("views-a", opts);
      expect(await b.cellPage("views-a", opts)).toEqual(cells);
    }
    expect((await a.requestPage("views-a", prices)).items[0]).toMatchObject({ id: "mr-1", cells: ["ex-1"], response_model: "m-2024" });
    for (const id of ["ex-1", "ex-2", "none"]) expect(await b.cellView(id)).toEqual(await a.cellView(id));
    expect((await a.cellView("ex-1"))?.displays).toHaveLength(1);
    expect(await b.frontierList("views-a")).toEqual(await a.frontierList("views-a"));
    const image = await a.displayImage(pngDigest);
    expect(Buffer.compare(image!.data, png)).toBe(0);
    expect(await b.displayImage(pngDigest)).toEqual(image);
    expect(await b.displayImage("sha256:00")).toBeNull();
    const view = await a.requestView("mr-1");
    expect(view?.messages.length).toBeGreaterThanOrEqual(2);
    expect(await b.requestView("mr-1")).toEqual(view);
    expect(await b.requestView("none")).toBeNull();
  });
});
