// pnpm bench (apps/host): the read views on PostgreSQL vs SQLite (C21), over one log written the
// same way to both: KLBR_BENCH_VIEW_SESSIONS sessions of KLBR_BENCH_VIEW_CELLS cells each (an
// input and a closed execution per cell, one running cell per session). `klbr log`'s whole read,
// the follower's first poll and an idle poll (nothing written: only the open rows come back; on
// PostgreSQL also the xmin scan of every table), the sessions page, a session's summary and its
// newest cell page. Prints p50 and the ratio; asserts nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import type { Store } from "../src/store/api";
import { pgStore } from "../src/store/pg";
import { sqliteStore } from "../src/store/sqlite";
import { ms, percentile } from "./figures";

const SESSIONS = Number(process.env.KLBR_BENCH_VIEW_SESSIONS ?? 20);
const CELLS = Number(process.env.KLBR_BENCH_VIEW_CELLS ?? 100);
const ROUNDS = 15;
const prices = new Map([["r", { input: 3, output: 15 }]]);

async function fill(store: Store): Promise<void> {
  let t = 1_000;
  for (let s = 0; s < SESSIONS; s++) {
    const sessionId = `bench-${s}`;
    for (let c = 0; c < CELLS; c++) {
      await store.recordInput({ sessionId, source: "operator", receivedAtMs: ++t, payload: { text: `input ${c}` }, attention: null });
      await store.startExecution({ id: `ex-${s}-${c}`, sessionId, generation: "g-1", code: `x = ${c}`, startedAtMs: ++t, origin: "exec" });
      await store.finishExecution(sessionId, `ex-${s}-${c}`, { status: "ok", output: [{ stream: "stdout", text: `${c}\n` }], endedAtMs: ++t });
    }
    await store.startExecution({ id: `ex-${s}-running`, sessionId, generation: "g-1", code: "while True: pass", startedAtMs: ++t });
  }
}

async function p50(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return percentile(times, 50);
}

async function figures(store: Store): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  out["readLog (klbr log)"] = await p50(() => store.readLog());
  out["follower first poll"] = await p50(async () => (await store.followLog()).poll());
  const follower = await store.followLog();
  await follower.poll();
  out["follower idle poll"] = await p50(() => follower.poll());
  out["sessions page"] = await p50(() => store.listSessions(prices));
  out["session summary"] = await p50(() => store.sessionSummary("bench-0", prices));
  out["newest cell page"] = await p50(() => store.cellPage("bench-0"));
  return out;
}

async function main(): Promise<void> {
  const missing = postgresMissing();
  if (missing) {
    console.log(`log views: skipped (${missing})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "klbr-bench-views-"));
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const lite = sqliteStore(migrateHostDb(sqlite), sqlite);
  const cluster = await startPostgres();
  try {
    const host = openPostgres(cluster.createDatabase(), { max: 4 });
    await migratePostgres(host.pool);
    const pg = pgStore(host);
    await fill(lite);
    await fill(pg);
    const [a, b] = [await figures(lite), await figures(pg)];
    console.log(`log views, ${SESSIONS} sessions x ${CELLS} cells (${SESSIONS * (CELLS * 2 + 1)} log entries), p50 of ${ROUNDS}:`);
    for (const name of Object.keys(a)) console.log(`  ${name.padEnd(22)} sqlite ${ms(a[name]!).padStart(12)}  postgres ${ms(b[name]!).padStart(12)}  ratio ${(b[name]! / a[name]!).toFixed(2)}x`);
    await pg.close();
  } finally {
    await lite.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
