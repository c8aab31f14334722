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
import { buildWebAssets, startWebDaemon, type WebDaemon } from "./web-support";

const TOKEN = "web-test-token-0123456789abcdef";
const SCREENSHOT = join(HOST_DIR, "..", "..", "docs", "web-session.png");
const HOSTILE_SCRIPT = "<script>window.__pwned = 1</script>";
const HOSTILE_IMG = '<img src=x onerror="window.__pwned = 2">';

let server: ScriptedServer;
let dataDir: string;
let workspace: string;
let assets: string;
let daemon: WebDaemon | null = null;
let browser: Browser | null = null;
let gates = 0;
const children: ChildProcess[] = [];
const consoleErrors: string[] = [];

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

beforeAll(async () => {
  dataDir = tempDir("klbr-web-");
  workspace = tempDir("klbr-webw-");
  assets = buildWebAssets(join(dataDir, "assets"));
  server = await startScriptedServer();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({
      default: "scripted",
      routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000, prices: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } }],
    }),
  );
  expect((await klbrRun([...common(), "init"])).code).toBe(0);
  daemon = await startWebDaemon([...common(), "serve", "--web", "127.0.0.1:0"], env());
  children.push(daemon.child);
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
    expect(cells[0]).toBe("root");
    expect(cells[6]).toBe("4"); // requests: two turns of two
    expect(cells[8]).toMatch(/^\$\d/); // priced: routes.json has prices
    await page.close();
  });

  test("the session page shows what the model read and the usage numbers the log holds; hostile output is inert text", async () => {
    const page = await newPage();
    await page.goto(daemon!.url);
    await page.locator('tr[data-session="root"] a').click();
    await page.waitForURL(/\/sessions\/root$/);
    const rows = logRows<{ id: string; usage: string }>("SELECT id, usage FROM model_requests ORDER BY started_at_ms, id");
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      const usage = JSON.parse(r.usage) as Record<string, number>;
      const summary = page.locator(`details[data-request="${r.id}"] > summary`);
      for (const key of ["prompt_tokens", "completion_tokens", "cached_prompt_tokens"]) {
        expect([r.id, key, await summary.locator(`[data-usage="${key}"] b`).innerText()]).toEqual([r.id, key, usage[key]!.toLocaleString("en-US")]);
      }
    }
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
    expect(await page.locator('[data-field="cpu_ms"] b').first().innerText()).toMatch(/^\d+$/);
    expect(await page.locator("figure.usage-chart rect.bar.read").count()).toBe(4);
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

  test("klbr web beside the daemon: the URL first, 401 without it, the same sessions with it", async () => {
    const web = await startWebDaemon([...common(), "web", "--listen", "127.0.0.1:0"], { ...env(), KLBR_WEB_TOKEN: "" });
    children.push(web.child);
    const url = new URL(web.url);
    const token = url.searchParams.get("token")!;
    expect(token).toMatch(/^[0-9a-f]{48}$/); // no KLBR_WEB_TOKEN: a fresh one
    expect((await fetch(`${url.origin}/api/sessions`)).status).toBe(401);
    const sessions = (await (await fetch(`${url.origin}/api/sessions`, { headers: { cookie: `klbr_web_${url.port}=${token}` } })).json()) as { daemon: boolean; sessions: Array<{ session_id: string; requests: number }> };
    expect(sessions.daemon).toBe(true);
    expect(sessions.sessions.find((s) => s.session_id === "root")).toMatchObject({ requests: 4 });
    await stopDaemon(web.child, "SIGINT");
    expect(web.child.exitCode).toBe(0);
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
  });
});
