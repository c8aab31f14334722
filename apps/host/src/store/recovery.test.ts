import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { migrateHostDb, openSqlite } from "../db/open";
import { getExecution, startExecution } from "./executions";
import { beginStop, getPeer, insertPeer } from "./peers";
import { createWait, getWait } from "./waits";
import { recordReply, recordRequest } from "./requests";
import { hostRequests } from "../db/schema";
import { recoverAfterCrash } from "./recovery";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function crashedLog() {
  const dir = mkdtempSync("/tmp/klbr-rec-");
  dirs.push(dir);
  const sqlite = openSqlite(join(dir, "klbr.sqlite"));
  const db = migrateHostDb(sqlite);
  startExecution(db, { id: "ex-cut", sessionId: "root", generation: "g-1", code: "pass", startedAtMs: 1_000 });
  createWait(db, { id: "wait-due", sessionId: "root", executionId: "ex-cut", reason: "r", seconds: 1, nowMs: 1_000 });
  // Another session: a session has one open wait at a time (C8).
  createWait(db, { id: "wait-later", sessionId: "other", executionId: "ex-cut", reason: "r", seconds: 600, nowMs: 1_000 });
  return { sqlite, db };
}

describe("recoverAfterCrash", () => {
  test("closes running cells as interrupted, wakes overdue waits, keeps the others open", () => {
    const { sqlite, db } = crashedLog();
    const r = recoverAfterCrash(db, 5_000);
    expect(r.interrupted).toEqual(["ex-cut"]);
    expect(r.woken.map((w) => w.id)).toEqual(["wait-due"]);
    expect(r.openWaits.map((w) => w.id)).toEqual(["wait-later"]);
    expect(getExecution(db, "ex-cut")).toMatchObject({ status: "interrupted", endedBy: "host_restart" });
    sqlite.close();
  });

  test("is all or nothing: a failure part way leaves the log as the crash left it", () => {
    const { sqlite, db } = crashedLog();
    sqlite.exec("DROP TABLE incidents"); // the last write of a recovery now fails
    expect(() => recoverAfterCrash(db, 5_000)).toThrow();
    expect(getExecution(db, "ex-cut")).toMatchObject({ status: "running" });
    expect(getWait(db, "wait-due")).toMatchObject({ state: "waiting" });
    sqlite.close();
  });

  test("a peer whose drain the crash cut short is stopped (its workbench is gone), an open one stays open", () => {
    const { sqlite, db } = crashedLog();
    for (const id of ["peer-a", "peer-b"]) {
      insertPeer(db, { id, sessionId: id.replace("peer", "ps"), openerSessionId: "root", openerExecutionId: "ex-cut", mode: "independent", evidence: [], openedAtMs: 1_000 });
    }
    beginStop(db, "peer-a", { drain: true, atMs: 2_000 });
    const r = recoverAfterCrash(db, 5_000);
    expect(r.stopped).toEqual(["peer-a"]);
    expect(getPeer(db, "peer-a")).toMatchObject({ status: "stopped", stoppedBy: "host_restart", stoppedAtMs: 5_000 });
    expect(getPeer(db, "peer-b")).toMatchObject({ status: "open" });
    sqlite.close();
  });

  test("a request in flight at the crash gets the host_restart reply; answered ones keep theirs (C8)", () => {
    const { sqlite, db } = crashedLog();
    const answered = recordRequest(db, { executionId: "ex-cut", requestId: "r1", method: "runtime.inspect", request: { method: "runtime.inspect" }, requestedAtMs: 1_000 });
    recordReply(db, answered, { kind: "ok", value: { now_ms: 1 } }, 1_001);
    const cut = recordRequest(db, { executionId: "ex-cut", requestId: "r2", method: "local.send", request: { method: "local.send", text: "x" }, requestedAtMs: 1_002 });
    recoverAfterCrash(db, 5_000);
    const rows = db.select().from(hostRequests).all();
    expect(rows.find((r) => r.id === answered)).toMatchObject({ reply: { kind: "ok" }, repliedAtMs: 1_001 });
    expect(rows.find((r) => r.id === cut)).toMatchObject({ reply: { kind: "error", code: "host_restart", sent: false }, repliedAtMs: 5_000 });
    sqlite.close();
  });
});
