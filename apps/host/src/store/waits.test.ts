import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { markConsumed, recordInput } from "./events";
import { createWait, getWait, openWaits, supersededBy, supersedeOlderOpenWaits, wakeDueWaits, wakeWait, wakeWaits } from "./waits";

let db: HostDb;
let sqlite: ReturnType<typeof memoryDb>["sqlite"];
let close: () => void;
beforeEach(() => {
  const m = memoryDb();
  db = m.db;
  sqlite = m.sqlite;
  close = () => m.sqlite.close();
});
afterEach(() => close());

const wait = (id: string, seconds: number | null, nowMs = T0, sessionId = "root") =>
  createWait(db, { id, sessionId, executionId: `ex-${id}`, reason: "r", seconds, nowMs });
const input = (sessionId = "root") => recordInput(db, { sessionId, source: "operator", receivedAtMs: T0, payload: { text: "hi" }, attention: null });

describe("createWait", () => {
  test("fractional seconds give an exact deadline in ms (never rounded to whole seconds first)", () => {
    expect(wait("w1", 1.5).reply).toEqual({ wait_id: "w1", deadline_ms: T0 + 1500, pending_input: false });
    expect(wait("w2", 0.25).row.deadlineMs).toBe(T0 + 250);
    expect(wait("w3", 2.0004).row.deadlineMs).toBe(T0 + 2000);
    expect(wait("w4", 0.0006).row.deadlineMs).toBe(T0 + 1);
    expect(getWait(db, "w2")!.seconds).toBe(0.25);
  });

  test("no seconds: no deadline", () => {
    expect(wait("w1", null).reply.deadline_ms).toBeNull();
  });

  test("an input already pending wakes the wait at once, recorded as such", () => {
    input();
    const { row, reply } = wait("w1", 10);
    expect(reply.pending_input).toBe(true);
    expect(row).toMatchObject({ state: "woken", wokenBy: "pending_input", wokenAtMs: T0 });
  });

  test("a consumed input is not pending; another session's input is not either", () => {
    const e = input();
    markConsumed(db, [e.id], T0);
    input("other");
    expect(wait("w1", 10).reply.pending_input).toBe(false);
  });

  test("a new wait supersedes the session's older open waits (C8), and only that session's", () => {
    wait("w1", 10);
    wait("w2", null, T0 + 5);
    wait("o1", 10, T0, "other");
    const third = wait("w3", 30, T0 + 9);
    expect(third.superseded.map((w) => w.id)).toEqual(["w2"]);
    expect(getWait(db, "w1")).toMatchObject({ state: "superseded", wokenBy: supersededBy("w2"), wokenAtMs: T0 + 5 });
    expect(getWait(db, "w2")).toMatchObject({ state: "superseded", wokenBy: "superseded:w3", wokenAtMs: T0 + 9 });
    expect(openWaits(db).map((w) => w.id).sort()).toEqual(["o1", "w3"]);
  });

  test("one input then wakes one wait of the session", () => {
    wait("w1", null);
    wait("w2", null);
    wait("w3", null);
    expect(wakeWaits(db, "root", "event:1", T0 + 1).map((w) => w.id)).toEqual(["w3"]);
  });
});

describe("waking", () => {
  test("wakeWait wakes only an open wait, once", () => {
    wait("w1", 10);
    expect(wakeWait(db, "w1", "deadline", T0 + 10_000)).toMatchObject({ state: "woken", wokenBy: "deadline" });
    expect(wakeWait(db, "w1", "deadline", T0 + 10_001)).toBeUndefined();
    expect(wakeWait(db, "nope", "deadline", T0)).toBeUndefined();
  });

  test("a superseded wait is never woken by its old deadline", () => {
    wait("w1", 1);
    wait("w2", null);
    expect(wakeWait(db, "w1", "deadline", T0 + 1000)).toBeUndefined();
    expect(wakeDueWaits(db, T0 + 10_000)).toEqual([]);
  });

  test("wakeDueWaits wakes exactly the waits whose deadline has passed", () => {
    wait("a", 1, T0, "s1");
    wait("b", 5, T0, "s2");
    wait("c", null, T0, "s3");
    expect(wakeDueWaits(db, T0 + 1000).map((w) => w.id)).toEqual(["a"]);
    expect(openWaits(db).map((w) => w.id).sort()).toEqual(["b", "c"]);
  });
});

describe("supersedeOlderOpenWaits (recovery of a log from before C8's one-open-wait rule)", () => {
  test("keeps each session's newest open wait", () => {
    // Written directly, as an older host did: three open waits of one session.
    for (const [id, at] of [["w1", T0], ["w2", T0 + 1], ["w3", T0 + 2]] as const) {
      sqlite.prepare("insert into waits (id, session_id, execution_id, reason, pending_input, state, created_at_ms) values (?, 'root', 'ex', 'r', 0, 'waiting', ?)").run(id, at);
    }
    wait("o1", null, T0, "other");
    expect(supersedeOlderOpenWaits(db, T0 + 10).map((w) => w.id).sort()).toEqual(["w1", "w2"]);
    expect(openWaits(db).map((w) => w.id).sort()).toEqual(["o1", "w3"]);
    expect(getWait(db, "w1")!.wokenBy).toBe("superseded:w3");
  });
});
