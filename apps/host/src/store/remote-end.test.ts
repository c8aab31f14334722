import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { endGeneration, insertGeneration, insertNamespace, latestGeneration } from "./remote";

let db: HostDb;
let sqlite: ReturnType<typeof memoryDb>["sqlite"];
beforeEach(() => ({ db, sqlite } = memoryDb()));
afterEach(() => sqlite.close());

describe("endGeneration", () => {
  test("a generation ended twice keeps its first end_reason and time", () => {
    insertNamespace(db, { id: "ns-1", sessionId: "root", target: "loop", openedByExecutionId: "ex-1", openedAtMs: T0 });
    const gen = { namespaceId: "ns-1", target: "loop", remotePid: 10, localPid: 11, runtimeDigest: "d", runtimeCopied: false, python: "python3", startedAtMs: T0 };
    insertGeneration(db, { ...gen, generation: "g-1" });
    insertGeneration(db, { ...gen, generation: "g-2" });
    endGeneration(db, "ns-1", "g-1", "shutdown", T0 + 1);
    endGeneration(db, "ns-1", "g-1", "closed", T0 + 2);
    const rows = sqlite.prepare("SELECT generation, end_reason, ended_at_ms FROM remote_generations ORDER BY id").all();
    expect(rows, "the second end must not overwrite the first, nor touch another generation").toEqual([
      { generation: "g-1", end_reason: "shutdown", ended_at_ms: T0 + 1 },
      { generation: "g-2", end_reason: null, ended_at_ms: null },
    ]);
    expect(latestGeneration(db, "ns-1")?.generation).toBe("g-2");
  });
});
