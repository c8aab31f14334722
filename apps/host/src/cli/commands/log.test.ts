import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openActivationStore } from "@klbr/activation";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { migrateHostDb, openSqlite, type HostDb } from "../../db/open";
import { finishExecution, startExecution } from "../../store/executions";
import { finishModelRequest, startModelRequest } from "../../store/model-requests";
import { recordIncident } from "../../store/incidents";
import * as logView from "../../store/log-view";
import { createWait, wakeWait } from "../../store/waits";
import { insertAdoption, insertCandidate, markAdopted } from "../../store/orientation";
import { insertWorkItem, recordAssessment } from "../../store/work-items";
import { logCommand } from "./log";

vi.mock(import("../../store/log-view"), async (original) => {
  const m = await original();
  return { ...m, readLog: vi.fn(m.readLog) };
});

let dataDir: string;
let writer: Database.Database;
let db: HostDb;
let out: string[];

beforeEach(() => {
  dataDir = mkdtempSync("/tmp/klbr-logc-");
  writer = openSqlite(join(dataDir, "klbr.sqlite"));
  db = migrateHostDb(writer);
  openActivationStore(writer).migrate();
  out = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
  vi.mocked(logView.readLog).mockClear();
  // The follower waits 300 ms between polls with setTimeout (one poll at a time).
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  writer.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Printed lines as [kind, id-or-status] pairs, then forgotten. */
function printed(): string[] {
  const lines = out.splice(0).join("").split("\n").filter(Boolean);
  return lines.map((l) => {
    const e = JSON.parse(l) as Record<string, unknown>;
    return `${String(e.kind)}:${String(e.id ?? e.detail)}${e.status ? `:${String(e.status)}` : ""}`;
  });
}

/** Run `klbr log --follow --json` until `body` is done, then stop it as SIGTERM would. */
async function follow(opts: { limit?: string; kind?: string }, body: () => Promise<void>): Promise<number> {
  const before = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
  const done = logCommand({ dataDir, follow: true, json: true, ...opts });
  // The command loads the database modules when it runs; it follows once it listens for SIGTERM.
  let settled = false;
  void done.finally(() => (settled = true)).catch(() => undefined);
  while (!settled && process.listeners("SIGTERM").length === before.SIGTERM.length) await new Promise((r) => setImmediate(r));
  try {
    await body();
  } finally {
    process.emit("SIGTERM");
    // The command leaves its SIGINT listener behind once SIGTERM stopped it; drop it here.
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      for (const l of process.listeners(signal)) if (!before[signal].includes(l)) process.off(signal, l);
    }
  }
  return done;
}

describe("klbr log --follow", () => {
  test("prints new rows once each, in order, and a row again when it changes; never reads the whole log after the first read", async () => {
    startExecution(db, { id: "x1", sessionId: "s", generation: "g", code: "1", startedAtMs: 1_000 });
    createWait(db, { id: "w1", sessionId: "s", executionId: "x1", reason: "later", seconds: 60, nowMs: 1_100 });
    const code = await follow({}, async () => {
      expect(printed()).toEqual(["execution:x1:running", "wait:w1"]);
      await vi.advanceTimersByTimeAsync(300);
      expect(printed()).toEqual([]);
      recordIncident(db, "b", 2, 3_000);
      recordIncident(db, "a", 1, 2_000);
      finishExecution(db, "x1", { status: "yielded", endedAtMs: 2_500 });
      await vi.advanceTimersByTimeAsync(300);
      expect(printed()).toEqual(["incident.a:1", "execution:x1:yielded", "incident.b:2"]);
      wakeWait(db, "w1", "deadline", 4_000);
      await vi.advanceTimersByTimeAsync(900);
      expect(printed()).toEqual(["wake:w1"]);
    });
    expect(code).toBe(0);
    expect(logView.readLog).not.toHaveBeenCalled();
  });

  test("-n with --follow: older entries are not printed, but a change to one of them is", async () => {
    startExecution(db, { id: "x1", sessionId: "s", generation: "g", code: "1", startedAtMs: 1_000 });
    recordIncident(db, "a", 1, 2_000);
    await follow({ limit: "1" }, async () => {
      expect(printed()).toEqual(["incident.a:1"]);
      finishExecution(db, "x1", { status: "ok", endedAtMs: 3_000 });
      await vi.advanceTimersByTimeAsync(300);
      expect(printed()).toEqual(["execution:x1:ok"]);
    });
  });

  test("without --follow the whole log is read once, as before", async () => {
    startExecution(db, { id: "x1", sessionId: "s", generation: "g", code: "1", startedAtMs: 1_000 });
    expect(await logCommand({ dataDir, json: true })).toBe(0);
    expect(printed()).toEqual(["execution:x1:running"]);
    expect(logView.readLog).toHaveBeenCalledTimes(1);
  });
});

describe("klbr log --kind", () => {
  const ids = { executionId: "x1", requestId: "r1" };
  function seed(): void {
    startExecution(db, { id: "x1", sessionId: "s", generation: "g", code: "1", startedAtMs: 1_000 });
    insertWorkItem(db, { id: "wi-1", sessionId: "s", ...ids, purpose: "p", reason: "r", evidenceRefs: [], createdAtMs: 1_100 });
    insertCandidate(db, { id: "c-1", sessionId: "s", ...ids, target: "style", scopeKind: "global", scopeSessionId: null, text: "t", digest: "d", stagedAtMs: 1_200 });
    recordIncident(db, "x", 1, 1_300);
  }

  test("maintenance shows work items and assessments; orientation candidates and adoptions; a list takes both", async () => {
    seed();
    recordAssessment(db, { workItemId: "wi-1", sessionId: "s", ...ids, requestId: "r2", outcome: "changed", atMs: 1_400 });
    insertAdoption(db, { operationId: "op-1", candidateId: "c-1", target: "style", scopeKind: "global", scopeSessionId: null, sessionId: "s", ...ids, requestId: "r3", step: 1, reply: {}, adoptedAtMs: 1_500 });
    markAdopted(db, "c-1");
    expect(await logCommand({ dataDir, json: true, kind: "maintenance" })).toBe(0);
    expect(printed()).toEqual(["maintenance.work_item:wi-1:closed", "maintenance.assessment:undefined:closed"]);
    expect(await logCommand({ dataDir, json: true, kind: "orientation" })).toBe(0);
    expect(printed()).toEqual(["orientation.candidate:c-1:adopted", "orientation.adoption:undefined"]);
    expect(await logCommand({ dataDir, json: true, kind: "incident,execution" })).toBe(0);
    expect(printed()).toEqual(["execution:x1:running", "incident.x:1"]);
    await expect(logCommand({ dataDir, json: true, kind: "," })).rejects.toMatchObject({ code: "CLI_USAGE" });
  });

  test("with --follow: an open item is printed again when it is assessed, other kinds never", async () => {
    seed();
    await follow({ kind: "maintenance" }, async () => {
      expect(printed()).toEqual(["maintenance.work_item:wi-1:open"]);
      recordAssessment(db, { workItemId: "wi-1", sessionId: "s", ...ids, requestId: "r2", outcome: "deferred", atMs: 2_000 });
      recordIncident(db, "y", 2, 2_100);
      await vi.advanceTimersByTimeAsync(300);
      expect(printed()).toEqual(["maintenance.work_item:wi-1:open", "maintenance.assessment:undefined:open"]);
      recordAssessment(db, { workItemId: "wi-1", sessionId: "s", ...ids, requestId: "r3", outcome: "abandoned", atMs: 3_000 });
      await vi.advanceTimersByTimeAsync(300);
      expect(printed()).toEqual(["maintenance.work_item:wi-1:closed", "maintenance.assessment:undefined:closed"]);
    });
  });
});

describe("klbr log: model requests (C18 response model)", () => {
  test("--json carries response_model on every request; the text line names it when it differs from the route's model", async () => {
    const base = { sessionId: "root", turnId: "turn_1", route: "r", api: "chat", model: "m-1", profile: {}, headerRecordId: 1, frontierId: null, throughSeq: 1, bodyDigest: "d", bodyBytes: 10, sharedPrefixBytes: 0 };
    startModelRequest(db, { ...base, id: "mr_snapshot", startedAtMs: 1_000 });
    finishModelRequest(db, "mr_snapshot", { reply: { text: "a", calls: [], stop: "stop" }, responseModel: "m-1-2026-12-01", usage: null, retries: 0, endedAtMs: 1_001 });
    startModelRequest(db, { ...base, id: "mr_same", startedAtMs: 2_000 });
    finishModelRequest(db, "mr_same", { reply: { text: "b", calls: [], stop: "stop" }, responseModel: "m-1", usage: null, retries: 0, endedAtMs: 2_001 });
    startModelRequest(db, { ...base, id: "mr_none", startedAtMs: 3_000 });
    finishModelRequest(db, "mr_none", { reply: { text: "c", calls: [], stop: "stop" }, usage: null, retries: 0, endedAtMs: 3_001 });
    expect(await logCommand({ dataDir, json: true, kind: "model.request" })).toBe(0);
    const entries = out.splice(0).join("").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.map((e) => [e.id, e.response_model])).toEqual([
      ["mr_snapshot", "m-1-2026-12-01"],
      ["mr_same", "m-1"],
      ["mr_none", null],
    ]);
    expect(await logCommand({ dataDir, requests: true, kind: "model.request" })).toBe(0);
    const lines = out.splice(0).join("").split("\n").filter(Boolean);
    expect(lines[0]).toContain(' model=\"m-1\" response_model=\"m-1-2026-12-01\" status=ok');
    expect(lines[1]).toContain(' model=\"m-1\" status=ok');
    expect(lines[2]).toContain(' model=\"m-1\" status=ok');
    expect(lines.join("\n").match(/usage=absent/g)).toHaveLength(3);
  });
});
