// The reading commands on PostgreSQL (C21), through the real binary and no daemon: `klbr log`
// (--json, --kind, --follow), `klbr display get` and `klbr web` read records written through
// PgStore, as they read SQLite's. A database no host has set up is HOST_NOT_RUNNING.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migratePostgres, openPostgres } from "../src/db/pg-open";
import { blobDigest } from "../src/store/blobs";
import { pgStore, type PgStore } from "../src/store/pg";
import { CLI, HOST_DIR, klbrRun } from "./cli-run";
import { tempDir } from "./helpers";
import { startWebDaemon } from "./web-support";

const TOKEN = "token-pg-0123456789abcdef01234567";
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 8, 7, 6, 5]);
const digest = blobDigest(png);
let dir: string;
let db: Awaited<ReturnType<typeof testDatabase>>;
let bare: Awaited<ReturnType<typeof testDatabase>>;
let store: PgStore | null = null;

beforeAll(async () => {
  dir = tempDir("klbr-readpg-");
  db = await testDatabase();
  if (db.skip) return;
  bare = await testDatabase();
  const host = openPostgres(db.url!, { max: 2 });
  await migratePostgres(host.pool);
  store = pgStore(host);
  await store.recordInput({ sessionId: "pg-s", source: "operator", receivedAtMs: 1000, payload: { text: "hello from pg" }, attention: null });
  await store.startExecution({ id: "ex-pg", sessionId: "pg-s", generation: "g-1", code: "plot()", startedAtMs: 1001, origin: "exec" });
  const ref = { seq: 0, digest, mimes: ["image/png"], text: "", images: [{ mime: "image/png" as const, digest, width: 1, height: 1, bytes: png.length }] };
  await store.storeDisplay("pg-s", "ex-pg", { ref, blobs: [{ digest, mediaType: "image/png", data: png }] }, [ref], 1002);
  await store.finishExecution("pg-s", "ex-pg", { status: "ok", output: [{ stream: "stdout", text: "done\n" }], endedAtMs: 1003 });
  await store.recordKernelReset({ sessionId: "pg-s", generation: "g-1", skillsRevision: null, pid: 7, reason: "start", atMs: 1004 });
});
afterAll(async () => {
  await store?.close();
  await bare?.stop();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { key: string; kind: string; [k: string]: unknown });

describe("reading a PostgreSQL log without a daemon", () => {
  test("klbr log --database: every entry, as --json and as lines; --kind keeps the kinds asked for", async (ctx) => {
    if (!store) return ctx.skip(db.skip ?? "no PostgreSQL");
    const json = await klbrRun(["-d", join(dir, "none"), "log", "--database", db.url!, "--json"]);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const entries = jsonLines(json.stdout);
    expect(entries.map((e) => e.key)).toEqual((await store.readLog()).map((e) => e.key));
    expect(entries.find((e) => e.kind === "execution")).toMatchObject({ id: "ex-pg", status: "ok", output: [{ stream: "stdout", text: "done\n" }], displays: [{ digest }] });
    const human = await klbrRun(["log", "--database", db.url!]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/input .*"hello from pg"/);
    expect(human.stdout).toMatch(/execution .*id="ex-pg"/);
    const kinds = await klbrRun(["log", "--json", "--kind", "kernel"], { env: { ...process.env, KLBR_DATABASE_URL: db.url! } });
    expect(jsonLines(kinds.stdout).map((e) => e.kind)).toEqual(["kernel.reset"]);
  });

  test("klbr log --follow --database: prints what is written after it started, stops on SIGINT", async (ctx) => {
    if (!store) return ctx.skip(db.skip ?? "no PostgreSQL");
    const child = spawn(CLI[0]!, [...CLI.slice(1), "-d", join(dir, "none"), "log", "--follow", "--json", "--database", db.url!], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let waiting: { text: string; resolve: () => void } | null = null;
    child.stdout!.on("data", (c) => {
      out += c;
      if (waiting && out.includes(waiting.text)) waiting.resolve();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const seen = (text: string) =>
      new Promise<void>((resolve, reject) => {
        waiting = { text, resolve };
        if (out.includes(text)) resolve();
        void exited.then(() => reject(new Error(`klbr log --follow exited before printing ${text}:\n${out}`)));
      });
    try {
      await seen('"ex-pg"');
      await store.recordInput({ sessionId: "pg-s", source: "operator", receivedAtMs: 2000, payload: { text: "written later" }, attention: null });
      await seen("written later");
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      const later = jsonLines(out).filter((e) => e.kind === "input");
      expect(later.map((e) => (e.payload as { text: string }).text)).toEqual(["hello from pg", "written later"]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  test("klbr display get --database: the image's bytes by a digest prefix", async (ctx) => {
    if (!store) return ctx.skip(db.skip ?? "no PostgreSQL");
    const file = join(dir, "plot.png");
    const r = await klbrRun(["display", "get", digest.slice(7, 23), "-o", file, "--database", db.url!]);
    expect(r.code).toBe(0);
    expect(Buffer.compare(readFileSync(file), png)).toBe(0);
    expect(r.stderr).toContain(`image/png`);
  });

  test("klbr web --database: the sessions list and a session's cells from PostgreSQL", async (ctx) => {
    if (!store) return ctx.skip(db.skip ?? "no PostgreSQL");
    // The JSON API needs no built front end: two empty assets are enough to start.
    const assets = join(dir, "assets");
    mkdirSync(assets, { recursive: true });
    for (const name of ["app.js", "app.css"]) writeFileSync(join(assets, name), "");
    const web = await startWebDaemon(["-d", join(dir, "none"), "web", "--listen", "127.0.0.1:0", "--database", db.url!], { ...process.env, KLBR_WEB_TOKEN: TOKEN, KLBR_WEB_ASSETS: assets });
    try {
      const origin = new URL(web.url).origin;
      const headers = { authorization: `token ${TOKEN}` };
      const sessions = (await (await fetch(`${origin}/api/sessions`, { headers })).json()) as { sessions: Array<{ session_id: string; cells: number }>; daemon: boolean };
      expect(sessions.daemon).toBe(false);
      expect(sessions.sessions).toEqual(expect.arrayContaining([expect.objectContaining({ session_id: "pg-s", cells: 1 })]));
      const session = (await (await fetch(`${origin}/api/sessions/pg-s`, { headers })).json()) as { cells: { items: Array<{ id: string; displays: unknown[] }> } };
      expect(session.cells.items.map((c) => [c.id, c.displays.length])).toEqual([["ex-pg", 1]]);
      const image = await fetch(`${origin}/api/images/${digest}`, { headers });
      expect(Buffer.compare(Buffer.from(await image.arrayBuffer()), png)).toBe(0);
      expect((await fetch(`${origin}/api/sessions`)).status).toBe(401);
    } finally {
      web.child.kill("SIGINT");
      await new Promise((resolve) => (web.child.exitCode !== null ? resolve(null) : web.child.once("exit", resolve)));
    }
  });

  test("a database no host has set up is HOST_NOT_RUNNING, a bad URL DATABASE_URL_INVALID", async (ctx) => {
    if (!store) return ctx.skip(db.skip ?? "no PostgreSQL");
    const r = await klbrRun(["log", "--database", bare.url!]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^klbr: HOST_NOT_RUNNING: no klbr records in /);
    const bad = await klbrRun(["log", "--database", "mysql://x/y"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/DATABASE_URL_INVALID/);
  });
});
