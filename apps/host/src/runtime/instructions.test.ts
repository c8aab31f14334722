import { observe } from "@klbr/header";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { appendHeaderRecord, headerChain } from "../store/headers";
import { insertAdoption, insertCandidate } from "../store/orientation";
import { sqliteStore } from "../store/sqlite";
import { InstructionHeaders } from "./instructions";

let db: HostDb;
let store: ReturnType<typeof sqliteStore>;
let close: () => void;
beforeEach(() => {
  const m = memoryDb();
  db = m.db;
  store = sqliteStore(m.db, m.sqlite);
  close = () => m.sqlite.close();
});
afterEach(() => close());

describe("InstructionHeaders after a header link fails verification", () => {
  test("the next generation's observation is full, and runtime.instructions reads the current text again", async () => {
    const headers = new InstructionHeaders(store, () => T0);
    let text = "rule one\n";
    await headers.observeGeneration("root", () => [{ name: "contract", text }]);
    // A revision that no longer verifies (a bad disk, a bad hand edit of the log).
    const good = observe(headerChain(db, "root"), [{ name: "contract", text: "rule one\nrule two\n" }], { origin: "host" }, T0)!;
    const damaged = { ...good, observed_at_ms: -5 };
    appendHeaderRecord(db, { sessionId: "root", type: "header_revision", digest: damaged.digest, record: damaged, atMs: T0 });
    expect(await headers.current("root")).toMatchObject({ text: "rule one\n", complete: false, stopped: { index: 1 } });
    text = "rule one\nrule 2\n";
    await headers.observeGeneration("root", () => [{ name: "contract", text }]);
    const form = () => (headerChain(db, "root") as Array<{ change?: { form: string } }>).at(-1)!.change!.form;
    expect(form()).toBe("full");
    expect(await headers.current("root")).toMatchObject({ text: "rule one\nrule 2\n", links: 3 });
    text = "rule one\nrule 2\nrule 3\n";
    await headers.observeGeneration("root", () => [{ name: "contract", text }]);
    expect(form()).toBe("diff");
    expect(await headers.current("root")).toMatchObject({ text: "rule one\nrule 2\nrule 3\n", links: 4 });
  });
});

describe("InstructionHeaders observations at once", () => {
  test("an adoption observed by two requests at once is one revision, its sources the adopted ones", async () => {
    const headers = new InstructionHeaders(store, () => T0);
    await headers.observeGeneration("root", (adopted) => [{ name: "contract", text: "rule one\n" }, ...adopted]);
    insertCandidate(db, { id: "c-1", sessionId: "root", executionId: "ex-1", requestId: "q-1", target: "style", text: "be terse", digest: "d", stagedAtMs: T0, scopeKind: "session", scopeSessionId: "root" });
    insertAdoption(db, { operationId: "op-1", candidateId: "c-1", target: "style", scopeKind: "session", scopeSessionId: "root", sessionId: "root", executionId: "ex-1", requestId: "q-2", step: 1, reply: {}, adoptedAtMs: T0 });
    const digests = await Promise.all([headers.observeOutside("root"), headers.observeOutside("root")]);
    const chain = headerChain(db, "root");
    expect(chain).toHaveLength(2);
    expect(digests[0]).toBe(digests[1]);
    expect(await headers.current("root")).toMatchObject({ text: "rule one\nbe terse\n", digest: digests[0], links: 2 });
  });
});
