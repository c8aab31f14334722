import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openActivationStore } from "@klbr/activation";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { migrateHostDb, openSqlite, type HostDb } from "../db/open";
import { recordInput, recordOutbound } from "./events";
import { finishExecution, startExecution } from "./executions";
import { appendHeaderRecord } from "./headers";
import { recordIncident } from "./incidents";
import { recordKernelReset } from "./kernel";
import { followLog, readLog, type LogEntry } from "./log-view";
import { recordReply, recordRequest } from "./requests";
import { createWait, wakeWait } from "./waits";

let dir: string;
let writer: Database.Database;
let db: HostDb;
let reader: Database.Database;

beforeEach(() => {
  dir = mkdtempSync("/tmp/klbr-log-");
  const file = join(dir, "klbr.sqlite");
  writer = openSqlite(file);
  db = migrateHostDb(writer);
  openActivationStore(writer).migrate();
  // As `klbr log` opens it: a second, read-only connection.
  reader = new Database(file, { readonly: true, fileMustExist: true });
});

afterEach(() => {
  reader.close();
  writer.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What `klbr log --follow` prints from a sequence of polls: each key once, in poll order. */
function printer() {
  const seen = new Set<string>();
  return (entries: LogEntry[]) => entries.filter((e) => !seen.has(e.key) && seen.add(e.key));
}

/** The follow loop as it was before the follower: the whole log on each poll. */
function wholeLogFollow(sqlite: Database.Database) {
  const print = printer();
  return () => print(readLog(sqlite));
}

function incrementalFollow(sqlite: Database.Database) {
  const print = printer();
  const follower = followLog(sqlite);
  return () => print(follower.poll());
}

const keys = (entries: LogEntry[]) => entries.map((e) => e.key);

/** A bit of every table, with open rows left open; returns what it started, to close later. */
function writeSome(n: number, at: number) {
  const exec = `x${n}`;
  startExecution(db, { id: exec, sessionId: "s", generation: "g1", code: `cell ${n}`, startedAtMs: at });
  recordInput(db, { sessionId: "s", source: "operator", receivedAtMs: at + 1, payload: { text: `hi ${n}` }, attention: null });
  const request = recordRequest(db, { executionId: exec, requestId: `r${n}`, method: "runtime.wait", request: {}, requestedAtMs: at + 2 });
  createWait(db, { id: `w${n}`, sessionId: `s${n}`, executionId: exec, reason: "later", seconds: 60, nowMs: at + 3 });
  recordOutbound(db, { sessionId: "s", text: `out ${n}`, effectId: `e${n}`, atMs: at + 4 });
  recordKernelReset(db, { sessionId: "s", generation: `g${n}`, reason: "start", atMs: at + 5 });
  appendHeaderRecord(db, { sessionId: "s", type: "header_pin", digest: `d${n}`, record: {}, atMs: at + 6 });
  recordIncident(db, "worker.exit", { n }, at + 7);
  writer
    .prepare("INSERT INTO activation_history (at_ms, expected_epoch, epoch_before, epoch_after, path, outcome) VALUES (?, 0, 0, 1, ?, 'activated')")
    .run(at + 8, `/r/${n}`);
  // An entry stamped at the same instant as an earlier one, in another table: table order decides.
  recordIncident(db, "same.instant", { n }, at);
  return { exec, request, wait: `w${n}` };
}

describe("followLog", () => {
  test("the first poll is exactly readLog", () => {
    writeSome(1, 1_000);
    writeSome(2, 2_000);
    expect(followLog(reader).poll()).toEqual(readLog(reader));
  });

  test("new rows appear once each, in order, as the whole-log follow printed them", () => {
    const before = wholeLogFollow(reader);
    const now = incrementalFollow(reader);
    writeSome(1, 1_000);
    expect(now()).toEqual(before());
    // Rows stamped earlier than rows already shown still come out, in at_ms order among the new.
    writeSome(3, 3_000);
    writeSome(2, 2_000);
    const second = now();
    expect(second).toEqual(before());
    expect(keys(second).filter((k) => k.startsWith("execution:"))).toEqual(["execution:x2:running", "execution:x3:running"]);
    expect(second.map((e) => e.at_ms)).toEqual([...second.map((e) => e.at_ms)].sort((a, b) => a - b));
    expect(new Set(keys(second)).size).toBe(second.length);
    expect(now()).toEqual([]);
    expect(before()).toEqual([]);
  });

  test("an open row is reported again when it changes, as before: a cell that ends, a request answered, a wait woken", () => {
    const before = wholeLogFollow(reader);
    const now = incrementalFollow(reader);
    const one = writeSome(1, 1_000);
    const two = writeSome(2, 2_000);
    expect(now()).toEqual(before());
    finishExecution(db, one.exec, { status: "ok", output: [{ stream: "result", text: "1" }], endedAtMs: 5_000 });
    recordReply(db, two.request, { kind: "ok", value: null }, 5_001);
    wakeWait(db, one.wait, "deadline", 5_002);
    const changes = now();
    expect(changes).toEqual(before());
    // A request keeps its request time, so its reply sorts before the later stamps.
    expect(keys(changes)).toEqual([`request:${two.request}:replied`, "execution:x1:ok", "wait:w1:woken"]);
    expect(changes[1]).toMatchObject({ kind: "execution", status: "ok", output: [{ stream: "result", text: "1" }], ended_at_ms: 5_000 });
    expect(changes[2]).toMatchObject({ kind: "wake", woken_by: "deadline" });
    // The rows still open are watched until they close too.
    finishExecution(db, two.exec, { status: "error", error: "boom", endedAtMs: 6_000 });
    wakeWait(db, two.wait, "event:1", 6_001);
    recordReply(db, one.request, { kind: "ok", value: 1 }, 6_002);
    const later = now();
    expect(later).toEqual(before());
    expect(keys(later)).toEqual([`request:${one.request}:replied`, "execution:x2:error", "wait:w2:woken"]);
    expect(now()).toEqual([]);
  });

  test("a poll with nothing new reads no old rows, only the rows still open", () => {
    const one = writeSome(1, 1_000);
    for (let n = 2; n <= 50; n++) {
      const w = writeSome(n, n * 1_000);
      finishExecution(db, w.exec, { status: "ok", endedAtMs: n * 1_000 + 500 });
      recordReply(db, w.request, { kind: "ok", value: null }, n * 1_000 + 501);
      wakeWait(db, w.wait, "deadline", n * 1_000 + 502);
    }
    const follower = followLog(reader);
    expect(follower.poll()).toHaveLength(50 * 10);
    expect(follower.rowsRead).toBe(50 * 10);
    // Three rows of the first batch are still open: each poll looks at those three only.
    expect(follower.poll()).toHaveLength(3);
    expect(follower.rowsRead).toBe(50 * 10 + 3);
    finishExecution(db, one.exec, { status: "ok", endedAtMs: 90_000 });
    recordReply(db, one.request, { kind: "ok", value: null }, 90_001);
    wakeWait(db, one.wait, "deadline", 90_002);
    expect(keys(follower.poll())).toEqual([`request:${one.request}:replied`, "execution:x1:ok", "wait:w1:woken"]);
    const read = follower.rowsRead;
    expect(follower.poll()).toEqual([]);
    expect(follower.rowsRead).toBe(read);
    recordIncident(db, "late", {}, 95_000);
    expect(keys(follower.poll())).toEqual([expect.stringMatching(/^incident:/)]);
    expect(follower.rowsRead).toBe(read + 1);
  });

  test("statements are prepared once, when the follower is made, not on each poll", () => {
    const prepare = vi.spyOn(reader, "prepare");
    const follower = followLog(reader);
    const made = prepare.mock.calls.length;
    expect(made).toBeGreaterThan(0);
    writeSome(1, 1_000);
    follower.poll();
    writeSome(2, 2_000);
    follower.poll();
    follower.poll();
    expect(prepare.mock.calls.length).toBe(made);
  });
});
