// pnpm bench (apps/host): the web view (C23) with a session of 10,000 records against the same
// page with 100, in the same run. A record here is one of each: a model request (with usage), a
// cell (with output) and its transcript record, and an operator input; the 10,000 session has
// 10,000 of every kind. Measured: the server's time to first byte of the session page (Node's
// http client, median of KLBR_BENCH_ROUNDS after warm-up) and the browser's load event (Debian's
// chromium through playwright-core: navigation start to loadEventEnd, median), for the session
// page and the sessions list. Prints the ratios; C23 asks for <= 3x and a load under 1 s. A bench,
// not a test: it asserts nothing.
import { request } from "node:http";
import { join } from "node:path";
import { migrateHostDb, openHostDatabase } from "../src/db/open";
import { dataLayout } from "../src/paths";
import { startWebServer, type WebServer } from "../src/web/server";
import { launchChromium } from "../test/chromium";
import { removeTree, tempDir } from "../test/helpers";
import { buildWebAssets } from "../test/web-support";
import { percentile } from "./figures";

const COUNTS = (process.env.KLBR_BENCH_RECORDS ?? "100,10000").split(",").map(Number);
const ROUNDS = Number(process.env.KLBR_BENCH_ROUNDS ?? 30);
const SESSION = "bench";

/** A data directory whose log holds one session of `n` records of each kind. */
function seed(n: number): string {
  const dataDir = tempDir("klbr-webb-");
  const sqlite = openHostDatabase(dataLayout(dataDir).database);
  migrateHostDb(sqlite);
  const t0 = Date.UTC(2026, 11, 1);
  const header = sqlite
    .prepare("INSERT INTO header_records (session_id, type, digest, record, at_ms) VALUES (?, 'header_pin', ?, ?, ?)")
    .run(SESSION, `${"a".repeat(64)}`, JSON.stringify({ type: "header_pin", digest: "a".repeat(64), text: "You are running inside klbr runtime.", reason: "session_start", pinned_at_ms: t0 }), t0).lastInsertRowid;
  const event = sqlite.prepare("INSERT INTO events (session_id, lane, direction, source, received_at_ms, payload) VALUES (?, 'operator', 'in', 'operator', ?, ?)");
  const transcript = sqlite.prepare("INSERT INTO transcript_records (session_id, kind, ref, request_id, call_id, detail, at_ms) VALUES (?, ?, ?, ?, ?, NULL, ?)");
  const requestRow = sqlite.prepare(
    `INSERT INTO model_requests (id, session_id, turn_id, route, api, model, profile, header_record_id, frontier_id, through_seq, body_digest, body_bytes, shared_prefix_bytes, status, error, retries, usage, reply, response_model, started_at_ms, ended_at_ms)
     VALUES (?, ?, ?, 'bench', 'chat', 'bench-1', '{}', ?, NULL, ?, ?, ?, ?, 'ok', NULL, 0, ?, ?, 'bench-1', ?, ?)`,
  );
  const execution = sqlite.prepare(
    `INSERT INTO executions (id, session_id, generation, code, status, output, truncated_bytes, error, ended_by, failure, started_at_ms, ended_at_ms, cpu_ms, peak_rss_bytes, origin)
     VALUES (?, ?, 'g-1', ?, 'ok', ?, 0, NULL, 'worker', NULL, ?, ?, 3, 20000000, 'model')`,
  );
  const output = JSON.stringify([{ stream: "stdout", text: `${"line of output ".repeat(8)}\n`.repeat(8) }]);
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const at = t0 + i * 1000;
      const input = event.run(SESSION, at, JSON.stringify({ text: `step ${i}: carry on` })).lastInsertRowid;
      const seq = Number(transcript.run(SESSION, "input", String(input), null, null, at).lastInsertRowid);
      const id = `mr-${String(i).padStart(6, "0")}`;
      const usage = { shape: "openai_chat", prompt_tokens: 2000 + i, completion_tokens: 40, cached_prompt_tokens: 1900 + i, total_tokens: 2040 + i, raw: [], flags: [] };
      const reply = { text: "Running the next step.", calls: [{ id: `call_${i}`, name: "python", arguments: JSON.stringify({ code: `x = ${i}\nprint(x)` }) }], stop: "tool_calls" };
      requestRow.run(id, SESSION, `turn-${Math.floor(i / 2)}`, header, seq, "b".repeat(64), 8000 + i, 7900 + i, JSON.stringify(usage), JSON.stringify(reply), at + 1, at + 300);
      transcript.run(SESSION, "reply", id, id, null, at + 300);
      const ex = `ex-${String(i).padStart(6, "0")}`;
      execution.run(ex, SESSION, `x = ${i}\nprint(x)`, output, at + 301, at + 340);
      transcript.run(SESSION, "cell", ex, id, `call_${i}`, at + 340);
    }
  })();
  sqlite.close();
  return dataDir;
}

/** Milliseconds from sending a GET to the first byte of the response. */
function ttfb(url: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { headers: { cookie } }, (res) => {
      res.once("data", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        res.resume();
        res.once("end", () => resolve(ms));
      });
      res.once("error", reject);
    });
    req.once("error", reject);
    req.end();
  });
}

const median = (xs: number[]) => percentile(xs, 50);
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

const assets = buildWebAssets(join(tempDir("klbr-weba-"), "assets"));
const browser = await launchChromium();
const results = new Map<number, { ttfb: number; load: number; listTtfb: number; listLoad: number; bytes: number }>();
try {
  for (const n of COUNTS) {
    const dataDir = seed(n);
    const layout = dataLayout(dataDir);
    let web: WebServer | undefined;
    try {
      web = await startWebServer({ database: layout.database, routesFile: layout.routes, controlSocket: layout.controlSocket, port: 0, token: "bench", assetsDir: assets });
      const origin = new URL(web.url).origin;
      const cookie = `klbr_web_${web.port}=bench`;
      const page = `${origin}/sessions/${SESSION}`;
      for (let i = 0; i < 3; i++) await ttfb(page, cookie);
      const server: number[] = [];
      const list: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        server.push(await ttfb(page, cookie));
        list.push(await ttfb(`${origin}/`, cookie));
      }
      const tab = await browser.newPage();
      await tab.goto(web.url);
      const loads: number[] = [];
      const listLoads: number[] = [];
      const loadOf = () => tab.evaluate(() => {
        const nav = (globalThis as unknown as { performance: { getEntriesByType(t: string): Array<{ loadEventEnd: number; startTime: number }> } }).performance.getEntriesByType("navigation")[0]!;
        return nav.loadEventEnd - nav.startTime;
      });
      for (let i = 0; i < Math.min(ROUNDS, 15); i++) {
        await tab.goto(page, { waitUntil: "load" });
        loads.push(await loadOf());
        await tab.goto(`${origin}/`, { waitUntil: "load" });
        listLoads.push(await loadOf());
      }
      const bytes = Buffer.byteLength(await (await fetch(page, { headers: { cookie } })).text());
      await tab.close();
      results.set(n, { ttfb: median(server), load: median(loads), listTtfb: median(list), listLoad: median(listLoads), bytes });
      const r = results.get(n)!;
      process.stdout.write(`web: session of ${n} records: page ttfb ${fmt(r.ttfb)}, load ${fmt(r.load)} (${(r.bytes / 1024).toFixed(0)} KiB); sessions list ttfb ${fmt(r.listTtfb)}, load ${fmt(r.listLoad)}\n`);
    } finally {
      await web?.close();
      removeTree(dataDir);
    }
  }
  const [base, big] = [results.get(COUNTS[0]!)!, results.get(COUNTS.at(-1)!)!];
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  process.stdout.write(
    `web: ${COUNTS.at(-1)} vs ${COUNTS[0]} records: session page ttfb ${ratio(big.ttfb, base.ttfb)}, load ${ratio(big.load, base.load)} (${fmt(big.load)}); sessions list ttfb ${ratio(big.listTtfb, base.listTtfb)}, load ${ratio(big.listLoad, base.listLoad)} (C23: <= 3x, load <= 1 s)\n`,
  );
} finally {
  await browser.close();
  removeTree(join(assets, ".."));
}
