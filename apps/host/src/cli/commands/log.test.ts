import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openActivationStore } from "@klbr/activation";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { migrateHostDb, openSqlite, type HostDb } from "../../db/open";
import { finishExecution, startExecution } from "../../store/executions";
import { recordIncident } from "../../store/incidents";
import * as logView from "../../store/log-view";
import { createWait, wakeWait } from "../../store/waits";
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
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
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
async function follow(opts: { limit?: string }, body: () => void): Promise<number> {
  const before = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
  const done = logCommand({ dataDir, follow: true, json: true, ...opts });
  // The command loads the database modules when it runs; it follows once it listens for SIGTERM.
  let settled = false;
  void done.finally(() => (settled = true)).catch(() => undefined);
  while (!settled && process.listeners("SIGTERM").length === before.SIGTERM.length) await new Promise((r) => setImmediate(r));
  try {
    body();
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
    const code = await follow({}, () => {
      expect(printed()).toEqual(["execution:x1:running", "wait:w1"]);
      vi.advanceTimersByTime(300);
      expect(printed()).toEqual([]);
      recordIncident(db, "b", 2, 3_000);
      recordIncident(db, "a", 1, 2_000);
      finishExecution(db, "x1", { status: "yielded", endedAtMs: 2_500 });
      vi.advanceTimersByTime(300);
      expect(printed()).toEqual(["incident.a:1", "execution:x1:yielded", "incident.b:2"]);
      wakeWait(db, "w1", "deadline", 4_000);
      vi.advanceTimersByTime(900);
      expect(printed()).toEqual(["wake:w1"]);
    });
    expect(code).toBe(0);
    expect(logView.readLog).not.toHaveBeenCalled();
  });

  test("-n with --follow: older entries are not printed, but a change to one of them is", async () => {
    startExecution(db, { id: "x1", sessionId: "s", generation: "g", code: "1", startedAtMs: 1_000 });
    recordIncident(db, "a", 1, 2_000);
    await follow({ limit: "1" }, () => {
      expect(printed()).toEqual(["incident.a:1"]);
      finishExecution(db, "x1", { status: "ok", endedAtMs: 3_000 });
      vi.advanceTimersByTime(300);
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
