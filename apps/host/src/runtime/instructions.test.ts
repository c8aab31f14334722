import { observe } from "@klbr/header";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { appendHeaderRecord, headerChain } from "../store/headers";
import { InstructionHeaders } from "./instructions";

let db: HostDb;
let close: () => void;
beforeEach(() => {
  const m = memoryDb();
  db = m.db;
  close = () => m.sqlite.close();
});
afterEach(() => close());

describe("InstructionHeaders after a header link fails verification", () => {
  test("the next generation's observation is full, and runtime.instructions reads the current text again", () => {
    const headers = new InstructionHeaders(db, () => T0, () => []);
    let text = "rule one\n";
    headers.observeGeneration("root", () => [{ name: "contract", text }]);
    // A revision that no longer verifies (a bad disk, a bad hand edit of the log).
    const good = observe(headerChain(db, "root"), [{ name: "contract", text: "rule one\nrule two\n" }], { origin: "host" }, T0)!;
    const damaged = { ...good, observed_at_ms: -5 };
    appendHeaderRecord(db, { sessionId: "root", type: "header_revision", digest: damaged.digest, record: damaged, atMs: T0 });
    expect(headers.current("root")).toMatchObject({ text: "rule one\n", complete: false, stopped: { index: 1 } });
    text = "rule one\nrule 2\n";
    headers.observeGeneration("root", () => [{ name: "contract", text }]);
    const form = () => (headerChain(db, "root") as Array<{ change?: { form: string } }>).at(-1)!.change!.form;
    expect(form()).toBe("full");
    expect(headers.current("root")).toMatchObject({ text: "rule one\nrule 2\n", links: 3 });
    text = "rule one\nrule 2\nrule 3\n";
    headers.observeGeneration("root", () => [{ name: "contract", text }]);
    expect(form()).toBe("diff");
    expect(headers.current("root")).toMatchObject({ text: "rule one\nrule 2\nrule 3\n", links: 4 });
  });
});
