// pnpm bench (apps/host): what C21's PostgreSQL store costs on the paths issue 42 measures, in
// one run. The Store calls a `1+1` cell makes (id check, execution opened, execution closed) and
// those of a scripted 20-step model turn (per step: intake, pin, frontiers, open wait, adoption
// mark, transcript read, request opened, reply committed with its record, the cell's calls and
// its transcript record) are replayed through SqliteStore (no lease: today's host; and fenced)
// and PgStore (fenced, as every C21 host writes) on a throwaway cluster over its Unix socket,
// durable (fsync, synchronous_commit on) and with synchronous_commit off (SQLite WAL NORMAL's
// durability). The host's own in-process `host.execute('1+1')` on SQLite is measured too, so the
// whole-path ratio of a cell is estimated as (host + PostgreSQL store - SQLite store) / host:
// the host does not run on PostgreSQL end to end yet (its services move to the Store one by one).
// Prints p50/p99 and ratios; asserts nothing. KLBR_BENCH_CELLS=400, KLBR_BENCH_TURNS=8.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import { NO_FENCE, type SessionFence, type Store } from "../src/store/api";
import { pgLeases, sqliteLeases, type LeaseKey, type LeaseStore } from "../src/store/leases";
import { pgStore } from "../src/store/pg";
import { sqliteStore } from "../src/store/sqlite";
import { Host } from "../src/runtime/host";
import { tempDir } from "../test/helpers";
import { ms, percentile } from "./figures";

const CELLS = Number(process.env.KLBR_BENCH_CELLS ?? 400);
const TURNS = Number(process.env.KLBR_BENCH_TURNS ?? 8);
const STEPS = 20;

let serial = 0;
const id = (p: string) => `${p}-${++serial}`;

/** The Store calls of one `klbr exec '1+1'` cell (runtime/cells.ts). */
async function cell(store: Store, sessionId: string, origin: string): Promise<string> {
  const exId = id("ex");
  await store.getExecution(exId);
  await store.startExecution({ id: exId, sessionId, generation: "g-1", code: "1+1", startedAtMs: Date.now(), origin });
  await store.finishExecution(sessionId, exId, { status: "ok", output: [{ stream: "stdout", text: "2\n" }], endedAtMs: Date.now(), cpuMs: 1, peakRssBytes: 1 });
  return exId;
}

/** The Store calls of one model step (runtime/session.ts) and the cell its reply runs. */
async function step(store: Store, sessionId: string, pinId: number, after: number): Promise<number> {
  await store.transcribeNew(sessionId, pinId, () => Date.now());
  await store.pinIdOf(sessionId);
  await store.pendingFrontierOf(sessionId);
  await store.installedFrontierOf(sessionId);
  await store.hasOpenWait(sessionId);
  await store.adoptionMark();
  await store.loadTranscript(sessionId, after);
  const requestId = id("mr");
  await store.startModelRequest({ id: requestId, sessionId, turnId: "t", route: "scripted", api: "openai", model: "m", profile: { name: "scripted" }, headerRecordId: pinId, frontierId: null, throughSeq: after, bodyDigest: "d", bodyBytes: 2000, sharedPrefixBytes: 1800, startedAtMs: Date.now() });
  const reply = { text: "", calls: [{ id: requestId, name: "python", arguments: '{"code":"1+1"}' }], stop: "tool_calls" };
  await store.commitModelReply(sessionId, requestId, { reply, responseModel: "m", usage: null, retries: 0, endedAtMs: Date.now() });
  const exId = await cell(store, sessionId, "model");
  return store.appendTranscript({ sessionId, kind: "cell", ref: exId, requestId, callId: requestId, atMs: Date.now() });
}

async function turn(store: Store, sessionId: string, pinId: number): Promise<void> {
  await store.recordInput({ sessionId, source: "operator", receivedAtMs: Date.now(), payload: { text: "go" }, attention: null });
  let after = await store.lastSeq(sessionId);
  for (let i = 0; i < STEPS; i++) after = await step(store, sessionId, pinId, Math.max(0, after - 4));
}

async function samples(n: number, warm: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warm; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

interface Figures {
  cell: number[];
  turn: number[];
}

/** One store's figures: cells and turns of one session. */
async function measure(store: Store, sessionId: string): Promise<Figures> {
  const pinId = await store.appendHeaderRecord({ sessionId, type: "header_pin", digest: "p", record: { text: "bench", digest: "p" }, atMs: Date.now() });
  const cells = await samples(CELLS, 50, () => cell(store, sessionId, "exec"));
  const turns = await samples(TURNS, 1, () => turn(store, sessionId, pinId));
  return { cell: cells, turn: turns };
}

/** A fence that gives `key` for every session of the bench (one host holding its lease). */
const fenceOf = (key: { current: LeaseKey | null }): SessionFence => ({ keyFor: () => key.current });

async function sqliteFigures(fenced: boolean): Promise<Figures> {
  const dir = tempDir();
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const db = migrateHostDb(sqlite);
  const key = { current: null as LeaseKey | null };
  const store = sqliteStore(db, sqlite, fenced ? fenceOf(key) : NO_FENCE);
  const leases = sqliteLeases(db, sqlite) as LeaseStore<unknown>;
  try {
    if (fenced) {
      const l = (await leases.claim("bench", "bench-host", 3_600_000))!;
      key.current = { sessionId: "bench", hostId: l.hostId, epoch: l.epoch };
    }
    return await measure(store, "bench");
  } finally {
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function pgFigures(url: string): Promise<Figures> {
  const pg = openPostgres(url, { max: 4 });
  await migratePostgres(pg.pool);
  const key = { current: null as LeaseKey | null };
  const store = pgStore(pg, fenceOf(key));
  try {
    const l = (await pgLeases(pg.db).claim("bench", "bench-host", 3_600_000))!;
    key.current = { sessionId: "bench", hostId: l.hostId, epoch: l.epoch };
    return await measure(store, "bench");
  } finally {
    await store.close();
  }
}

async function hostCell(): Promise<number[]> {
  const dataDir = mkdtempSync("/tmp/klbr-sp-");
  const workspace = mkdtempSync("/tmp/klbr-spw-");
  const host = await Host.start({ dataDir, workspace, spares: 0 });
  try {
    return await samples(300, 30, () => host.execute("1+1"));
  } finally {
    await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

const p50 = (s: number[]) => percentile(s, 50);
const row = (name: string, s: number[], base: number[]) => console.log(`${name.padEnd(58)} p50 ${ms(p50(s)).padEnd(12)} p99 ${ms(percentile(s, 99)).padEnd(12)} x${(p50(s) / p50(base)).toFixed(2)}`);

const missing = postgresMissing();
if (missing) {
  console.log(`store path (C21): skipped, ${missing}`);
} else {
  const host = await hostCell();
  const plain = await sqliteFigures(false);
  const fenced = await sqliteFigures(true);
  const cluster = await startPostgres({ durable: true });
  let durable: Figures;
  let relaxed: Figures;
  try {
    durable = await pgFigures(cluster.createDatabase());
    const url = cluster.createDatabase();
    relaxed = await pgFigures(`${url}&options=${encodeURIComponent("-c synchronous_commit=off")}`);
  } finally {
    await cluster.stop();
  }
  console.log(`store path (C21): ${CELLS} cells, ${TURNS} turns of ${STEPS} steps per mode; ratio against SQLite without a lease (today's host)`);
  console.log("  a `1+1` cell's Store calls (3 calls, 2 writes)");
  row("    SQLite, no lease", plain.cell, plain.cell);
  row("    SQLite, fenced", fenced.cell, plain.cell);
  row("    PostgreSQL, fenced, durable commit", durable.cell, plain.cell);
  row("    PostgreSQL, fenced, synchronous_commit off", relaxed.cell, plain.cell);
  console.log(`  a scripted ${STEPS}-step turn's Store calls (17 calls, 6 writes a step)`);
  row("    SQLite, no lease", plain.turn, plain.turn);
  row("    SQLite, fenced", fenced.turn, plain.turn);
  row("    PostgreSQL, fenced, durable commit", durable.turn, plain.turn);
  row("    PostgreSQL, fenced, synchronous_commit off", relaxed.turn, plain.turn);
  const whole = p50(host);
  console.log(`  whole path, estimated: host.execute('1+1') on SQLite p50 ${ms(whole)}; on PostgreSQL = that + the store difference`);
  for (const [name, f] of [["durable", durable], ["synchronous_commit off", relaxed]] as const) {
    const est = whole + p50(f.cell) - p50(plain.cell);
    console.log(`    \`1+1\`, PostgreSQL ${name}: ${ms(est)}  x${(est / whole).toFixed(2)}  target <= 1.5x`);
  }
}
