import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { hostRequests, waits } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { attachFakeWorkbench } from "./fake-workbench";
import { resultOf, startTestHost } from "./helpers";

// The host's own refusals, met by a fake worker that does what the Python runtime never does.
let host: Host;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ host, close } = await startTestHost());
  await attachFakeWorkbench(host, "root", "g-fake");
});
afterAll(async () => close());

const rowsOf = (executionId: string) =>
  host.db.select().from(hostRequests).where(eq(hostRequests.executionId, executionId)).orderBy(asc(hostRequests.id)).all();
const codeOf = (reply: unknown) => {
  const r = reply as { kind: string; code?: string };
  return r.kind === "ok" ? "ok" : r.code;
};

describe("a worker that sends a request after its yield (the host's scope check)", () => {
  test("a second wait pipelined behind the first is refused by the host: one cell, one durable wait", async () => {
    const r = await host.execute("yield-pipelined");
    expect(r.status).toBe("yielded");
    expect(JSON.parse(resultOf(r)!).sort()).toEqual(["ok", "scope_expired"]);
    expect(host.db.select().from(waits).where(eq(waits.executionId, r.id)).all()).toHaveLength(1);
    const rows = rowsOf(r.id);
    expect(rows.map((row) => [row.requestId, codeOf(row.reply)])).toEqual([
      ["p1", "ok"],
      ["p2", "scope_expired"],
    ]);
    expect((rows[1]!.reply as { message: string }).message).toContain(r.id);
  });
});

describe("every host request row gets its reply row (C8)", () => {
  test("the supervisor's limit_exceeded refusals of the 129th and 130th request are logged", async () => {
    const r = await host.execute("many:130");
    const rows = rowsOf(r.id);
    expect(rows).toHaveLength(130);
    expect(rows.every((row) => row.reply !== null && row.repliedAtMs !== null)).toBe(true);
    expect(rows.filter((row) => codeOf(row.reply) === "limit_exceeded")).toHaveLength(2);
    expect(rows.filter((row) => codeOf(row.reply) === "ok")).toHaveLength(128);
  });

  test("the supervisor's scope_expired refusal of a request after an accepted wait is logged", async () => {
    const r = await host.execute("yield");
    expect(r.status).toBe("yielded");
    const rows = rowsOf(r.id);
    expect(rows.map((row) => [row.requestId, row.method, codeOf(row.reply)])).toEqual([
      ["w1", "runtime.wait", "ok"],
      ["w2", "local.send", "scope_expired"],
    ]);
    expect(rows[1]!.request).toEqual({ method: "local.send", text: "after" });
  });

  test("a request for an execution that is not running is logged with its refusal", async () => {
    await host.execute("stray");
    expect(rowsOf("ghost").map((row) => codeOf(row.reply))).toEqual(["scope_expired"]);
  });
});
