import { afterEach, beforeEach, expect, test } from "vitest";
import type Database from "better-sqlite3";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { getEvent, recordInput } from "./events";
import { appendHeaderRecord } from "./headers";
import { transcriptRows } from "./transcript";
import { transcribeNew, type IntakeRecord } from "./transcribe";
import { turnStatements } from "./turn-statements";

let db: HostDb;
let sqlite: Database.Database;
beforeEach(() => ({ db, sqlite } = memoryDb()));
afterEach(() => sqlite.close());

const input = (action: string | null, sessionId = "s") =>
  recordInput(db, { sessionId, source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention: action === null ? null : { effective: { action } } }).id;
const header = (type: "header_pin" | "header_revision", sessionId = "s") => appendHeaderRecord(db, { sessionId, type, digest: "d", record: { text: "h" }, atMs: T0 });

/** One intake as a step runs it, appending through the session's statement; how often it asked the time (only under the write lock). */
function intake(pinId: number, at = T0 + 1): { records: IntakeRecord[]; locked: number } {
  const records: IntakeRecord[] = [];
  let locked = 0;
  const now = () => {
    expect(sqlite.inTransaction).toBe(true);
    locked += 1;
    return at;
  };
  transcribeNew(sqlite, "s", pinId, now, (r) => {
    records.push(r);
    turnStatements(sqlite).appendTranscript.get({ sessionId: "s", kind: r.kind, ref: r.ref, requestId: null, callId: null, detail: null, atMs: r.atMs });
  });
  return { records, locked };
}

test("takes new inputs (not the ignored ones) and the revisions after the pin into the transcript under the write lock, consuming the inputs", () => {
  header("header_revision");
  const pin = header("header_pin");
  const a = input(null);
  const ignored = input("ignore");
  const b = input("wake");
  input(null, "other");
  const r = header("header_revision");
  header("header_revision", "other");
  const first = intake(pin);
  expect(first.locked).toBe(1);
  expect(first.records).toEqual([
    { kind: "input", ref: String(a), atMs: T0 + 1 },
    { kind: "input", ref: String(b), atMs: T0 + 1 },
    { kind: "observation", ref: String(r), atMs: T0 + 1 },
  ]);
  expect([a, b].map((id) => getEvent(db, id)!.consumedAtMs)).toEqual([T0 + 1, T0 + 1]);
  expect(getEvent(db, ignored)!.consumedAtMs).toBeNull();
  expect(transcriptRows(sqlite, "s", 0).map((row) => [row.kind, row.ref])).toEqual(first.records.map((x) => [x.kind, x.ref]));
});

test("a step with nothing new takes no write lock and appends nothing; what comes later is taken in then", () => {
  const pin = header("header_pin");
  expect(intake(pin)).toEqual({ records: [], locked: 0 });
  const a = input(null);
  expect(intake(pin, T0 + 2)).toEqual({ records: [{ kind: "input", ref: String(a), atMs: T0 + 2 }], locked: 1 });
  expect(intake(pin, T0 + 3)).toEqual({ records: [], locked: 0 });
  const r = header("header_revision");
  expect(intake(pin, T0 + 4)).toEqual({ records: [{ kind: "observation", ref: String(r), atMs: T0 + 4 }], locked: 1 });
  expect(intake(pin, T0 + 5)).toEqual({ records: [], locked: 0 });
  expect(transcriptRows(sqlite, "s", 0).map((row) => row.ref)).toEqual([String(a), String(r)]);
});

test("an ignored input alone is looked at under the lock and still appends nothing (as when the lock was always taken)", () => {
  const pin = header("header_pin");
  input("ignore");
  expect(intake(pin)).toEqual({ records: [], locked: 1 });
  expect(transcriptRows(sqlite, "s", 0)).toEqual([]);
});
