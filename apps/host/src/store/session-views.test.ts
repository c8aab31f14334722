import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { migrateHostDb, openHostDatabase } from "../db/open";
import { removeTree, tempDir } from "../../test/helpers";
import { cellPage, listSessions, requestPage, sessionSummary } from "./session-views";

let dir: string;
let writer: Database.Database;
let reader: Database.Database;
const prices = new Map([["paid", { input: 3, output: 15, cache_read: 0.3 }]]);

beforeEach(() => {
  dir = tempDir("klbr-lv-");
  writer = openHostDatabase(join(dir, "klbr.sqlite"));
  migrateHostDb(writer);
  reader = new Database(join(dir, "klbr.sqlite"), { readonly: true });
});
afterEach(() => {
  reader.close();
  writer.close();
  removeTree(dir);
});

function request(id: string, session: string, route: string, at: number, usage: Record<string, number> | null, status = "ok") {
  writer
    .prepare(
      `INSERT INTO model_requests (id, session_id, turn_id, route, api, model, profile, header_record_id, through_seq, body_digest, body_bytes, shared_prefix_bytes, status, retries, usage, started_at_ms)
       VALUES (?, ?, 't', ?, 'chat', 'm', '{}', 1, 0, 'd', 1, 0, ?, 0, ?, ?)`,
    )
    .run(id, session, route, status, usage ? JSON.stringify({ shape: "openai_chat", ...usage, raw: [], flags: [] }) : null, at);
}

function cell(id: string, session: string, at: number, status = "ok") {
  writer.prepare("INSERT INTO executions (id, session_id, generation, code, status, output, started_at_ms, ended_at_ms) VALUES (?, ?, 'g-1', 'x', ?, '[]', ?, ?)").run(id, session, status, at, status === "running" ? null : at + 5);
}

test("totals per session and route; cost only where the route is priced; a running request joins the totals once it closes", () => {
  request("r1", "a", "paid", 1000, { prompt_tokens: 1000, cached_prompt_tokens: 600, completion_tokens: 10 });
  request("r2", "a", "free", 2000, { prompt_tokens: 50, completion_tokens: 5 });
  request("r3", "b", "paid", 3000, null);
  cell("c1", "a", 2500);
  const a = sessionSummary(reader, "a", prices)!;
  expect(a).toMatchObject({ requests: 2, prompt_tokens: 1050, completion_tokens: 15, cached_prompt_tokens: 600, cells: 1, last_activity_ms: 2505, generation: "g-1" });
  expect(a.cost_usd).toBeCloseTo((400 * 3 + 600 * 0.3 + 10 * 15) / 1e6, 12);
  expect(a.cost_by_route.find((r) => r.route === "free")!.cost).toBeNull();
  expect(sessionSummary(reader, "b", prices)).toMatchObject({ requests: 1, requests_without_usage: 1, cost_usd: null });
  expect(sessionSummary(reader, "nobody", prices)).toBeNull();

  request("r4", "a", "paid", 4000, null, "running");
  expect(sessionSummary(reader, "a", prices)).toMatchObject({ requests: 3, prompt_tokens: 1050 });
  writer.prepare("UPDATE model_requests SET status = 'ok', usage = ? WHERE id = 'r4'").run(JSON.stringify({ shape: "openai_chat", prompt_tokens: 100, completion_tokens: 1, raw: [], flags: [] }));
  expect(sessionSummary(reader, "a", prices)).toMatchObject({ requests: 3, prompt_tokens: 1150, completion_tokens: 16, requests_without_usage: 0 });
  expect(listSessions(reader, prices).map((s) => [s.session_id, s.requests])).toEqual([["a", 3], ["b", 1]]);
});

test("pages: the newest by default, any asked for, each in order; a reply's cells named", () => {
  for (let i = 0; i < 120; i++) {
    request(`r${String(i).padStart(3, "0")}`, "s", "paid", 1000 + i, { prompt_tokens: 10, completion_tokens: 1 });
    cell(`c${String(i).padStart(3, "0")}`, "s", 1000 + i, i === 119 ? "running" : "ok");
  }
  writer.prepare("INSERT INTO transcript_records (session_id, kind, ref, request_id, call_id, at_ms) VALUES ('s', 'cell', 'c119', 'r119', 'k', 1)").run();
  const last = requestPage(reader, "s", prices);
  expect([last.page, last.pages, last.total, last.items.length]).toEqual([3, 3, 120, 20]);
  expect(last.items.at(-1)).toMatchObject({ id: "r119", cells: ["c119"] });
  expect(requestPage(reader, "s", prices, { page: 1 }).items.map((r) => r.id).slice(0, 2)).toEqual(["r000", "r001"]);
  expect(requestPage(reader, "s", prices, { page: 9 }).page).toBe(3);
  const cells = cellPage(reader, "s", { page: 2 });
  expect(cells.items.map((c) => c.id)).toEqual(Array.from({ length: 50 }, (_, i) => `c${String(50 + i).padStart(3, "0")}`));
  expect(cellPage(reader, "s").items.at(-1)).toMatchObject({ id: "c119", status: "running", request_id: "r119" });
  expect(sessionSummary(reader, "s", prices)).toMatchObject({ cells: 120, running_cells: 1 });
});
