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
import { dataLayout } from "../src/paths";
import { startWebServer, type WebServer } from "../src/web/server";
import { launchChromium } from "../test/chromium";
import { removeTree, tempDir } from "../test/helpers";
import { seedWebSession } from "../test/web-seed";
import { buildWebAssets } from "../test/web-support";
import { percentile } from "./figures";

const COUNTS = (process.env.KLBR_BENCH_RECORDS ?? "100,10000").split(",").map(Number);
const ROUNDS = Number(process.env.KLBR_BENCH_ROUNDS ?? 30);
const SESSION = "bench";

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
    const dataDir = seedWebSession(n, SESSION);
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
