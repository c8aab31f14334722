// pnpm bench (apps/host): one fenced write (C21) — withLease locking and checking the lease row,
// then one events insert, committed — on PostgreSQL against SQLite, in the same run. SQLite is the
// baseline twice: the host's write today (one synchronous insert, no lease) and the same fenced
// write through the async lease API. PostgreSQL runs in a throwaway cluster over its Unix socket,
// durable as configured by default (fsync, synchronous_commit on), and again with
// synchronous_commit off, which is the durability SQLite's WAL + synchronous=NORMAL gives (a
// crash of the machine may lose the last commits, never corrupt). Prints p50/p99 and ratios;
// asserts nothing. KLBR_BENCH_WRITES=2000 (per mode, after 200 warm-up writes).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import * as pgSchema from "../src/db/pg-schema";
import * as schema from "../src/db/schema";
import { pgLeases, sqliteLeases, withLease } from "../src/store/leases";
import { tempDir } from "../test/helpers";
import { ms, percentile } from "./figures";

const WRITES = Number(process.env.KLBR_BENCH_WRITES ?? 2000);
const WARMUP = 200;
const event = (sessionId: string, i: number) => ({ sessionId, lane: "operator", direction: "in" as const, source: "bench", receivedAtMs: i, payload: { text: `write ${i}` } });

async function time(write: (i: number) => Promise<void> | void): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await write(-i);
  const out: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const t = performance.now();
    await write(i);
    out.push(performance.now() - t);
  }
  return out;
}

async function sqliteModes(): Promise<{ plain: number[]; fenced: number[] }> {
  const dir = tempDir();
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const db = migrateHostDb(sqlite);
  const leases = sqliteLeases(db, sqlite);
  await leases.register("bench", null);
  const lease = (await leases.claim("s", "bench", 3_600_000))!;
  const plain = await time((i) => void db.insert(schema.events).values(event("s", i)).run());
  const fenced = await time((i) => withLease(leases, lease, async (tx) => void tx.insert(schema.events).values(event("s", i)).run()));
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
  return { plain, fenced };
}

async function pgMode(url: string): Promise<number[]> {
  const host = openPostgres(url, { max: 4 });
  try {
    await migratePostgres(host.pool);
    const leases = pgLeases(host.db);
    await leases.register("bench", null);
    const lease = (await leases.claim("s", "bench", 3_600_000))!;
    return await time((i) => withLease(leases, lease, async (tx) => void (await tx.insert(pgSchema.events).values(event("s", i)))));
  } finally {
    await host.close();
  }
}

const line = (name: string, v: number[], base?: number[]) =>
  console.log(
    `${name.padEnd(44)} p50 ${ms(percentile(v, 50)).padEnd(12)} p99 ${ms(percentile(v, 99)).padEnd(12)}${base ? ` x${(percentile(v, 50) / percentile(base, 50)).toFixed(2)} of SQLite fenced (p50)` : ""}`,
  );

const missing = postgresMissing();
if (missing) {
  console.log(`leases bench: skipped, ${missing}`);
} else {
  const lite = await sqliteModes();
  const pg = await startPostgres({ durable: true });
  try {
    const durable = await pgMode(pg.createDatabase("bench_durable"));
    const asyncCommit = await pgMode(`${pg.createDatabase("bench_async")}&options=${encodeURIComponent("-c synchronous_commit=off")}`);
    console.log(`fenced write: lock + check the lease row, insert one event, commit (${WRITES} writes each, sequential)`);
    line("SQLite insert, no lease (today's write)", lite.plain);
    line("SQLite fenced (async queue, BEGIN IMMEDIATE)", lite.fenced);
    line("PostgreSQL fenced, synchronous_commit off", asyncCommit, lite.fenced);
    line("PostgreSQL fenced, durable commit (fsync)", durable, lite.fenced);
  } finally {
    await pg.stop();
  }
}
