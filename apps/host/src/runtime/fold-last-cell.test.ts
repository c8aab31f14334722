import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { startExecution } from "../store/executions";
import { appendTranscript } from "../store/transcript";
import { sqliteStore } from "../store/sqlite";
import { lastCellSection } from "./frontier-block";

// C12's "last cell" section at the edge: the fold's covers_through may be the cell record itself.

let db: HostDb;
let sqlite: ReturnType<typeof memoryDb>["sqlite"];
beforeEach(() => ({ db, sqlite } = memoryDb()));
afterEach(() => sqlite.close());

function cell(id: string, code: string): number {
  startExecution(db, { id, sessionId: "root", generation: "g-1", code, startedAtMs: T0 });
  return appendTranscript(db, { sessionId: "root", kind: "cell", ref: id, atMs: T0 });
}

describe("lastCellSection", () => {
  test("a fold whose covers_through is a cell's own record names that cell as the last cell", async () => {
    cell("ex-first", "print('first')");
    const second = cell("ex-second", "print('second')");
    cell("ex-third", "print('third')");
    const section = await lastCellSection({ store: sqliteStore(db, sqlite), sessionId: "root", coversThrough: second });
    expect(section.title).toBe("last cell");
    expect(section.lines[0], "covers_through is inclusive: the cell at that seq is the last one covered").toContain("print('second')");
  });

  test("covers_through before any cell: no last cell; one past a cell: still that cell", async () => {
    const input = appendTranscript(db, { sessionId: "root", kind: "input", ref: "1", atMs: T0 });
    const only = cell("ex-only", "x = 1");
    const store = sqliteStore(db, sqlite);
    expect((await lastCellSection({ store, sessionId: "root", coversThrough: input })).lines).toEqual([]);
    expect((await lastCellSection({ store, sessionId: "root", coversThrough: only + 1 })).lines[0]).toContain("x = 1");
  });
});
