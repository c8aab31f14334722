// The web view (C23) in a real browser: Debian's chromium driven by playwright-core, against
// `klbr serve --web` (and `klbr web`) started from source, a session driven by the scripted route
// on loopback, and cells in the real Python worker. It writes the README's screenshot.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser, ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { launchChromium } from "./chromium";
import { CLI, HOST_DIR, klbrRun, type Run } from "./cli-run";
import { removeTree, tempDir } from "./helpers";
import { stopDaemon } from "./processes";
import { seedWebSession } from "./web-seed";
import { buildWebAssets, startWebDaemon, type WebDaemon } from "./web-support";
import { startWebServer } from "../src/web/server";
import { dataLayout } from "../src/paths";

const TOKEN = "web-test-token-0123456789abcdef";
const SCREENSHOT = join(HOST_DIR, "..", "..", "docs", "web-session.png");
const HOSTILE_SCRIPT = "<script>window.__pwned = 1</script>";
const HOSTILE_IMG = '<img src=x onerror="window.__pwned = 2">';
/** routes.json's prices of the scripted route, USD per million tokens. */
const PRICES = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };
/** How the page writes an amount: cents from a cent up, four significant digits below. */
const usdText = (n: number) => (n >= 0.01 ? `$${n.toFixed(2)}` : `$${Number(n.toPrecision(4))}`);

let server: ScriptedServer;
let dataDir: string;
let workspace: string;
let assets: string;
let daemon: WebDaemon | null = null;
let browser: Browser | null = null;
let gates = 0;
const children: ChildProcess[] = [];
const consoleErrors: string[] = [];
/** Every URL a page asked for that is not this server's own (works offline: no CDN, nothing fetched elsewhere). */
const elsewhere: string[] = [];
let ownRequests = 0;
/** The origins of the web servers this test started. */
const ours = new Set<string>();

const common = () => ["--data-dir", dataDir, "--workspace", workspace];
const env = () => ({ ...process.env, KLBR_WEB_TOKEN: TOKEN, KLBR_WEB_ASSETS: assets });
const origin = () => new URL(daemon!.url).origin;
const cookie = () => `klbr_web_${new URL(daemon!.url).port}=${TOKEN}`;

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A klbr command running in the background; `done` settles when it exits. */
function start(args: string[]): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...common(), ...args], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (c) => (stdout += c));
  child.stderr!.on("data", (c) => (stderr += c));
  return { child, done: new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr }))) };
}

function gate(): { path: string; wait: string; open: () => void } {
  const path = join(workspace, `gate-${++gates}`);
  return { path, wait: `while not os.path.exists(${JSON.stringify(path)}):\n    time.sleep(0.005)\n`, open: () => writeFileSync(path, "") };
}

async function newPage(): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (m: ConsoleMessage) => {
    if (m.type() === "error") consoleErrors.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.protocol === "data:") return;
    if (ours.has(url.origin)) ownRequests++;
    else elsewhere.push(r.url());
  });
  return page;
}

/** The log's rows, read as the test's own witness (not through the web server). */
function logRows<T>(sql: string): T[] {
  const db = new Database(join(dataDir, "klbr.sqlite"), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

type Usage = { prompt_tokens: number; completion_tokens: number; cached_prompt_tokens?: number; cache_write_tokens?: number };
const KINDS = ["input", "cache_read", "cache_write", "output"] as const;

/** The tokens of each kind a request is billed for, from the log's usage: plain input is the prompt less its cache reads and writes. */
function billed(u: Usage): Record<(typeof KINDS)[number], number> {
  const read = u.cached_prompt_tokens ?? 0;
  const write = u.cache_write_tokens ?? 0;
  return { input: u.prompt_tokens - read - write, cache_read: read, cache_write: write, output: u.completion_tokens };
}

/** The cost at PRICES and the formula the page should show for it, worked out here (the test's own arithmetic). */
function expectedCost(u: Usage): { usd: number; formula: string } {
  const tokens = billed(u);
  const terms = KINDS.filter((k) => tokens[k] > 0);
  const usd = terms.reduce((sum, k) => sum + (tokens[k] * PRICES[k]) / 1e6, 0);
  return { usd, formula: `(${terms.map((k) => `${tokens[k].toLocaleString("en-US")} ${k} × $${PRICES[k]}`).join(" + ")}) / 1,000,000 = $${Number(usd.toPrecision(6))}` };
}

const usagesOfRoot = () => logRows<{ id: string; usage: string }>("SELECT id, usage FROM model_requests WHERE session_id = 'root' ORDER BY started_at_ms, id").map((r) => ({ id: r.id, usage: JSON.parse(r.usage) as Usage }));
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

beforeAll(async () => {
  dataDir = tempDir("klbr-web-");
  workspace = tempDir("klbr-webw-");
  assets = buildWebAssets(join(dataDir, "assets"));
  server = await startScriptedServer();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({
      default: "scripted",
      routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000, prices: PRICES }],
    }),
  );
  expect((await klbrRun([...common(), "init"])).code).toBe(0);
  daemon = await startWebDaemon([...common(), "serve", "--web", "127.0.0.1:0"], env());
  children.push(daemon.child);
  ours.add(new URL(daemon.url).origin);
  // A model turn: a reply with a cell whose output is hostile markup, then a reply that ends the turn.
  server.push(
    { text: "Let me look <b>around</b>.", calls: [{ code: `print(${JSON.stringify(HOSTILE_SCRIPT)})\nprint(${JSON.stringify(HOSTILE_IMG)})\n6 * 7` }] },
    { text: "All done." },
  );
  expect((await klbrRun([...common(), "say", "hi there, web"])).code).toBe(0);
  await until(() => logRows<{ n: number }>("SELECT count(*) AS n FROM model_requests WHERE status = 'ok'")[0]!.n === 2 && logRows("SELECT 1 FROM executions WHERE status = 'running'").length === 0);
  // A second turn that folds (C12): a frontier, and a request that restarts from it.
  server.push({ text: "Folding.", calls: [{ code: "f = await runtime.frontier_select()\nf['installs']" }] }, { text: "Folded." });
  expect((await klbrRun([...common(), "say", "fold now"])).code).toBe(0);
  await until(() => logRows<{ n: number }>("SELECT count(*) AS n FROM model_requests WHERE status = 'ok'")[0]!.n === 4 && logRows("SELECT 1 FROM executions WHERE status = 'running'").length === 0);
  // A third turn whose cell adopts orientation (C11): the header revision it observes is carried by the request after it (C5).
  server.push(
    { text: "Adopting.", calls: [{ code: "await runtime.orientation_stage('c-web', 'Prefer short answers.', 'style')\n(await runtime.orientation_adopt('c-web', 'op-web-1'))['digest']" }] },
    { text: "Adopted." },
  );
  expect((await klbrRun([...common(), "say", "adopt a style"])).code).toBe(0);
  await until(() => logRows<{ n: number }>("SELECT count(*) AS n FROM model_requests WHERE status = 'ok'")[0]!.n === 6 && logRows("SELECT 1 FROM executions WHERE status = 'running'").length === 0);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const child of children) await stopDaemon(child);
  await server?.close();
  removeTree(dataDir);
  removeTree(workspace);
});

describe("klbr web (C23) in chromium", { timeout: 240_000 }, () => {
  test("the URL with the token is the first line; without the token or its cookie every request is 401", async () => {
    expect(daemon!.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?token=${TOKEN}$`));
    for (const path of ["/", "/sessions/root", "/api/sessions", "/api/sessions/root", "/assets/app.js", "/api/sessions/root/live", "/nothing", "/?token=wrong"]) {
      const res = await fetch(`${origin()}${path}`, { redirect: "manual" });
      expect([path, res.status]).toEqual([path, 401]);
    }
    expect((await fetch(`${origin()}/api/sessions`, { headers: { cookie: `klbr_web_${new URL(daemon!.url).port}=wrong` } })).status).toBe(401);
    const post = await fetch(`${origin()}/api/cells/ex_1/interrupt`, { method: "POST" });
    expect(post.status).toBe(401);
    // The printed URL opens the page by itself and sets an HttpOnly cookie (the page drops the token from the address bar).
    const first = await fetch(daemon!.url, { redirect: "manual" });
    expect(first.status).toBe(200);
    expect(first.headers.get("set-cookie")).toMatch(/HttpOnly/);
    // With the cookie, still read-only: a write other than the page's interrupt is refused.
    expect((await fetch(`${origin()}/api/sessions`, { method: "POST", headers: { cookie: cookie() } })).status).toBe(405);
    expect((await fetch(`${origin()}/api/cells/ex_1/interrupt`, { method: "POST", headers: { cookie: cookie() } })).status).toBe(403);
  });

  test("the sessions list shows the session the scripted route drove, with its requests and cost", async () => {
    const page = await newPage();
    await page.goto(daemon!.url);
    expect(new URL(page.url()).search).toBe(""); // the token is gone from the address bar
    const row = page.locator('tr[data-session="root"]');
    await row.waitFor();
    const cells = await row.locator("td").allInnerTexts();
    // The log's own figures for the row, read after the page was served (the daemon is idle).
    const usages = usagesOfRoot().map((r) => r.usage);
    const [lease] = logRows<{ host_id: string | null }>("SELECT host_id FROM leases WHERE session_id = 'root'");
    const [newest] = logRows<{ generation: string }>("SELECT generation FROM executions WHERE session_id = 'root' ORDER BY started_at_ms DESC, rowid DESC LIMIT 1");
    const [last] = logRows<{ at: number }>(
      `SELECT max(at) AS at FROM (SELECT max(coalesce(ended_at_ms, started_at_ms)) AS at FROM executions WHERE session_id = 'root'
       UNION ALL SELECT max(coalesce(ended_at_ms, started_at_ms)) FROM model_requests WHERE session_id = 'root'
       UNION ALL SELECT max(received_at_ms) FROM events WHERE session_id = 'root' UNION ALL SELECT max(at_ms) FROM transcript_records WHERE session_id = 'root')`,
    );
    const n = (x: number) => x.toLocaleString("en-US");
    expect(cells[0]).toBe("root");
    expect(cells[1]).toBe("ready"); // the daemon's state of the session's workbench
    expect(cells[2]).toBe(lease?.host_id ?? "–");
    expect(cells[3]).toBe(newest!.generation);
    expect(cells[4]).toBe(`${new Date(last!.at).toISOString().slice(0, 19).replace("T", " ")}Z`);
    expect(cells[6]).toBe("6"); // requests: three turns of two
    expect(cells[7]).toBe(`${n(sum(usages.map((u) => u.prompt_tokens)))} / ${n(sum(usages.map((u) => u.completion_tokens)))} / ${n(sum(usages.map((u) => u.cached_prompt_tokens ?? 0)))}`);
    expect(cells[8]).toBe(usdText(sum(usages.map((u) => expectedCost(u).usd)))); // routes.json's prices, the test's arithmetic
    await page.close();
  });

  test("the session page shows what the model read and the usage numbers the log holds; hostile output is inert text", async () => {
    const page = await newPage();
    await page.goto(daemon!.url);
    await page.locator('tr[data-session="root"] a').click();
    await page.waitForURL(/\/sessions\/root$/);
    const rows = logRows<{ id: string; usage: string }>("SELECT id, usage FROM model_requests ORDER BY started_at_ms, id");
    expect(rows).toHaveLength(6);
    for (const r of rows) {
      const usage = JSON.parse(r.usage) as Usage & Record<string, number>;
      const summary = page.locator(`details[data-request="${r.id}"] > summary`);
      for (const key of ["prompt_tokens", "completion_tokens", "cached_prompt_tokens"]) {
        expect([r.id, key, await summary.locator(`[data-usage="${key}"] b`).innerText()]).toEqual([r.id, key, usage[key]!.toLocaleString("en-US")]);
      }
      // The cache share (cache reads over the whole prompt), and the cost with its formula from routes.json's prices.
      const share = `${((100 * (usage.cached_prompt_tokens ?? 0)) / usage.prompt_tokens).toFixed(1)}%`;
      expect([r.id, await summary.locator('[data-usage="cache_share"] b').innerText()]).toEqual([r.id, share]);
      const cost = expectedCost(usage);
      expect([r.id, await summary.locator(".figure.cost b").innerText()]).toEqual([r.id, usdText(cost.usd)]);
      expect([r.id, await page.locator(`details[data-request="${r.id}"] > p.formula`).textContent()]).toEqual([r.id, `cost = ${cost.formula}`]);
      // The chart: this request's pair of bars, cache read beside plain input.
      const bars = await page.locator("figure.usage-chart rect.bar title").allTextContents();
      expect(bars.filter((t) => t.startsWith(`${r.id}: `))).toEqual([`${r.id}: cache read ${(usage.cached_prompt_tokens ?? 0).toLocaleString("en-US")} tokens`, `${r.id}: input ${billed(usage).input.toLocaleString("en-US")} tokens`]);
    }
    // The session's formula by route: the summed tokens at the route's prices.
    const totals = usagesOfRoot().map((u) => billed(u.usage));
    const summed = expectedCost({ prompt_tokens: sum(totals.map((t) => t.input + t.cache_read + t.cache_write)), completion_tokens: sum(totals.map((t) => t.output)), cached_prompt_tokens: sum(totals.map((t) => t.cache_read)), cache_write_tokens: sum(totals.map((t) => t.cache_write)) });
    expect(await page.locator("details.formulas p.mono").allTextContents()).toEqual([`scripted (6 requests): ${summed.formula}`]);
    // The second request, opened: the operator's input, the first reply's tool call and its result, as sent.
    const second = page.locator(`details[data-request="${rows[1]!.id}"]`);
    await second.locator("summary").click();
    await second.locator(".message.tool").waitFor();
    expect(await second.locator(".message.user").first().innerText()).toContain("hi there, web");
    expect(await second.locator(".message.assistant .call pre").first().innerText()).toContain(HOSTILE_SCRIPT);
    expect(await second.locator(".message.tool pre").first().innerText()).toContain(HOSTILE_IMG);
    expect(await second.locator(".message.system").count()).toBe(1);
    // The cell: its output is the markup's characters, nothing ran and no element was made of it.
    const output = page.locator("section.cell pre.output").first();
    expect(await output.innerText()).toContain(`${HOSTILE_SCRIPT}\n${HOSTILE_IMG}`);
    expect(await page.locator("section.cell pre.output img, section.cell pre.output script, .message img, .message script").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.evaluate(() => (globalThis as unknown as { document: { scripts: { length: number } } }).document.scripts.length)).toBe(2); // the data and app.js
    // Each cell's cpu_ms and peak_rss_bytes as the log holds them (the host measured both).
    const measured = logRows<{ id: string; cpu_ms: number | null; peak_rss_bytes: number | null }>("SELECT id, cpu_ms, peak_rss_bytes FROM executions WHERE session_id = 'root'");
    expect(measured).toHaveLength(3);
    for (const c of measured) {
      expect([c.id, c.cpu_ms === null, (c.peak_rss_bytes ?? 0) > 0]).toEqual([c.id, false, true]);
      const head = page.locator(`section.cell[data-cell="${c.id}"] .cell-head`);
      expect([c.id, await head.locator('[data-field="cpu_ms"] b').innerText(), await head.locator('[data-field="peak_rss_bytes"] b').innerText()]).toEqual([c.id, String(c.cpu_ms), String(c.peak_rss_bytes)]);
    }
    expect(await page.locator("figure.usage-chart rect.bar.read").count()).toBe(6);
    await page.close();
  });

  test("folds and frontiers: the frontier the second turn selected, and the request that restarted from it", async () => {
    const [frontier] = logRows<{ id: string; covers_through: number; block: string }>("SELECT id, covers_through, block FROM frontiers");
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    const shown = page.locator(`details[data-frontier="${frontier!.id}"]`);
    expect(await shown.locator("summary").innerText()).toContain(`selected · covers through #${frontier!.covers_through}`);
    expect(await shown.locator("summary").innerText()).toContain("installed");
    const [after] = logRows<{ id: string }>(`SELECT id FROM model_requests WHERE frontier_id = '${frontier!.id}' ORDER BY started_at_ms LIMIT 1`);
    const request = page.locator(`details[data-request="${after!.id}"]`);
    await request.locator("summary").click();
    await request.locator(".request-detail").waitFor();
    expect(await request.locator(".meta").first().innerText()).toContain(`from frontier ${frontier!.id}`);
    expect(await request.locator(".meta").first().innerText()).toContain("(fold)"); // the pin the fold wrote
    // The frontier's block is the first user message the model read after the system header.
    expect(await request.locator(".message").nth(1).innerText()).toContain("## open waits");
    await page.close();
  });

  test("header revisions: the request after the cell that adopted orientation carries the revision it observed", async () => {
    const [obs] = logRows<{ seq: number; digest: string }>("SELECT t.seq, h.digest FROM transcript_records t JOIN header_records h ON h.id = CAST(t.ref AS INTEGER) WHERE t.session_id = 'root' AND t.kind = 'observation'");
    expect(obs).toBeDefined();
    const requests = logRows<{ id: string; through_seq: number }>("SELECT id, through_seq FROM model_requests WHERE session_id = 'root' ORDER BY started_at_ms, id");
    const at = requests.findIndex((r) => r.through_seq >= obs!.seq);
    expect(at).toBeGreaterThan(0);
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    const open = async (id: string) => {
      const request = page.locator(`details[data-request="${id}"]`);
      await request.locator("summary").click();
      await request.locator(".request-detail").waitFor();
      return request;
    };
    const before = await open(requests[at - 1]!.id);
    expect(await before.locator(".observations").count()).toBe(0);
    const after = await open(requests[at]!.id);
    expect(await after.locator(".observations .label").textContent()).toBe("header revisions observed: 1");
    expect(await after.locator(".observations pre").innerText()).toContain(obs!.digest.slice(0, 19));
    await page.close();
  });

  test("a printing cell's output appears in the page before the cell ends", async () => {
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    await page.locator(".top .badge.ok").waitFor(); // the live stream is connected
    const g = gate();
    const run = start(["exec", `import os, time\nprint('tick-live-1', flush=True)\n${g.wait}print('after the gate')`]);
    const cell = page.locator('section.cell[data-status="running"]', { hasText: "tick-live-1" });
    await cell.waitFor();
    expect(existsSync(g.path)).toBe(false); // the cell is still blocked: what the page shows came live
    expect(await cell.locator("pre.output").innerText()).toContain("tick-live-1");
    g.open();
    expect((await run.done).code).toBe(0);
    await page.locator('section.cell[data-status="ok"]', { hasText: "after the gate" }).waitFor();
    await page.close();
  });

  test("an image display renders inline, live while its cell runs and from the record after", async () => {
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    await page.locator(".top .badge.ok").waitFor();
    const g = gate();
    const helpers = readFileSync(join(HOST_DIR, "test", "display-cells.py"), "utf8");
    const run = start(["exec", `${helpers}\nimport os, time\nprint('showing', flush=True)\ndisplay(Picture(160, 90, (40, 110, 200)))\n${g.wait}'shown'`]);
    const live = page.locator('section.cell[data-status="running"]', { hasText: "showing" }).locator("figure.display img");
    await live.waitFor();
    await until(async () => (await live.evaluate((img) => (img as unknown as { complete: boolean }).complete)) === true);
    expect(await live.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(160);
    expect(existsSync(g.path)).toBe(false);
    g.open();
    expect((await run.done).code).toBe(0);
    const stored = page.locator('section.cell[data-status="ok"]', { hasText: "showing" }).locator("figure.display img");
    await stored.waitFor();
    await until(async () => (await stored.evaluate((img) => (img as unknown as { complete: boolean }).complete)) === true);
    expect(await stored.evaluate((img) => [(img as unknown as { naturalWidth: number }).naturalWidth, (img as unknown as { naturalHeight: number }).naturalHeight])).toEqual([160, 90]);
    expect(await page.locator('section.cell[data-status="ok"]', { hasText: "showing" }).locator("figure.display").count()).toBe(1);
    await page.close();
  });

  test("the interrupt button stops a busy cell through the daemon's interrupt", async () => {
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    await page.locator(".top .badge.ok").waitFor();
    const run = start(["exec", "print('spinning', flush=True)\nwhile True:\n    pass"]);
    const busy = page.locator('section.cell[data-status="running"]', { hasText: "spinning" });
    await busy.waitFor();
    const id = await busy.getAttribute("data-cell");
    await busy.locator("button.interrupt").click();
    await page.locator(`section.cell[data-cell="${id}"][data-status="interrupted"]`).waitFor();
    const done = await run.done;
    expect(done.code).not.toBe(0);
    expect(logRows<{ status: string }>(`SELECT status FROM executions WHERE id = '${id}'`)).toEqual([{ status: "interrupted" }]);
    await page.close();
  });

  test("klbr web beside the daemon: 127.0.0.1 by default, the URL first, 401 without it, the same sessions with it", async () => {
    const web = await startWebDaemon([...common(), "web"], { ...env(), KLBR_WEB_TOKEN: "" });
    children.push(web.child);
    const url = new URL(web.url);
    // No --listen: loopback, on 8765 or (taken) one of the next ports up.
    expect(url.hostname).toBe("127.0.0.1");
    expect(Number(url.port)).toBeGreaterThanOrEqual(8765);
    expect(Number(url.port)).toBeLessThan(8765 + 20);
    const token = url.searchParams.get("token")!;
    expect(token).toMatch(/^[0-9a-f]{48}$/); // no KLBR_WEB_TOKEN: a fresh one
    expect((await fetch(`${url.origin}/api/sessions`)).status).toBe(401);
    const sessions = (await (await fetch(`${url.origin}/api/sessions`, { headers: { cookie: `klbr_web_${url.port}=${token}` } })).json()) as { daemon: boolean; sessions: Array<{ session_id: string; requests: number }> };
    expect(sessions.daemon).toBe(true);
    expect(sessions.sessions.find((s) => s.session_id === "root")).toMatchObject({ requests: 6 });
    await stopDaemon(web.child, "SIGINT");
    expect(web.child.exitCode).toBe(0);
  });

  test("a session of 10,000 records: one page of each list, the pager to the oldest, the totals over all", async () => {
    const big = seedWebSession(10_000, "big");
    const layout = dataLayout(big);
    const web = await startWebServer({ database: layout.database, routesFile: layout.routes, controlSocket: layout.controlSocket, token: TOKEN, assetsDir: assets });
    ours.add(new URL(web.url).origin);
    try {
      const page = await newPage();
      await page.goto(web.url);
      const row = page.locator('tr[data-session="big"]');
      await row.waitFor();
      expect((await row.locator("td").allInnerTexts()).slice(5, 7)).toEqual(["10,000", "10,000"]);
      await page.goto(`${new URL(web.url).origin}/sessions/big`);
      const pager = page.locator('nav[data-pager="requests"]');
      await pager.waitFor();
      // The newest page of 50 of each, not 10,000 elements.
      expect(await page.locator("details[data-request]").count()).toBe(50);
      expect(await page.locator("section.cell").count()).toBe(50);
      expect(await page.locator("figure.usage-chart rect.bar.read").count()).toBe(50);
      expect(await pager.innerText()).toContain("page 200 of 200 · 10,000 requests");
      expect(await page.locator("details[data-request]").last().getAttribute("data-request")).toBe("mr-009999");
      expect(await page.locator('[data-field="requests"] .value').innerText()).toBe("10,000");
      await pager.locator("a", { hasText: "first" }).click();
      await page.waitForURL(/\?requests=1$/);
      expect(await page.locator("details[data-request]").first().getAttribute("data-request")).toBe("mr-000000");
      expect(await page.locator("section.cell").last().getAttribute("data-cell")).toBe("ex-009999"); // the cells stay on their newest page
      await page.close();
    } finally {
      await web.close();
      removeTree(big);
    }
  });

  test("the README screenshot, and no console errors on any page", async () => {
    const page = await newPage();
    await page.goto(`${origin()}/?token=${TOKEN}`);
    await page.goto(`${origin()}/sessions/root`);
    await page.locator(".top .badge.ok").waitFor();
    const rows = logRows<{ id: string }>("SELECT id FROM model_requests ORDER BY started_at_ms, id");
    const second = page.locator(`details[data-request="${rows[1]!.id}"]`);
    await second.locator("summary").click();
    await second.locator(".message.tool").waitFor();
    mkdirSync(join(SCREENSHOT, ".."), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.close();
    expect(consoleErrors).toEqual([]);
    // Works offline: every page asked this host for everything (no CDN, no font or script from elsewhere).
    expect(elsewhere).toEqual([]);
    expect(ownRequests).toBeGreaterThan(10);
  });
});
