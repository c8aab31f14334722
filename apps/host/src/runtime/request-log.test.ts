import { asc } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { memoryDb, T0 } from "../../test/request-context";
import type { HostDb } from "../db/open";
import { hostRequests } from "../db/schema";
import { sqliteStore } from "../store/sqlite";
import { RequestLog } from "./request-log";

let db: HostDb;
let close: () => void;
let log: RequestLog;
beforeEach(() => {
  const m = memoryDb();
  db = m.db;
  close = () => m.sqlite.close();
  log = new RequestLog(sqliteStore(db, m.sqlite), () => T0);
});
afterEach(() => close());
const rows = () => db.select().from(hostRequests).orderBy(asc(hostRequests.id)).all();

describe("RequestLog", async () => {
  test("a handled request's row gets exactly the reply that went out, not what the handler returned", async () => {
    await log.opened("s", "ex-1", "r1", { method: "evidence.resolve" });
    await log.replied({ executionId: "ex-1", requestId: "r1", request: {}, handled: true, sent: true, reply: { kind: "error", code: "internal", message: "the reply could not be encoded" } });
    expect(rows()).toEqual([expect.objectContaining({ executionId: "ex-1", requestId: "r1", method: "evidence.resolve", reply: { kind: "error", code: "internal", message: "the reply could not be encoded" }, repliedAtMs: T0 })]);
  });

  test("aliases are recorded under the canonical method, for handled requests and refusals alike", async () => {
    await log.opened("s", "ex-1", "r1", { method: "agents.open" });
    await log.replied({ executionId: "ex-1", requestId: "r2", request: { method: "peer.message", content: "x" }, handled: false, sent: true, reply: { kind: "error", code: "limit_exceeded", message: "m" } });
    expect(rows().map((r) => [r.method, (r.request as { method: string }).method])).toEqual([
      ["peer.open", "peer.open"],
      ["peer.send", "peer.send"],
    ]);
  });

  test("a refusal the handler never saw is recorded whole, with an unparseable request kept as sent", async () => {
    await log.replied({ executionId: "ex-1", requestId: "r9", request: "not an object", handled: false, sent: true, reply: { kind: "error", code: "invalid_request", message: "m" } });
    expect(rows()).toEqual([expect.objectContaining({ method: "(unparsed)", request: "not an object", reply: expect.objectContaining({ code: "invalid_request" }) })]);
  });

  test("a reply that reached nobody is kept with sent: false", async () => {
    await log.opened("s", "ex-1", "r1", { method: "runtime.inspect" });
    await log.replied({ executionId: "ex-1", requestId: "r1", request: {}, handled: true, sent: false, reply: { kind: "ok", value: 1 } });
    expect(rows()[0]!.reply).toEqual({ kind: "ok", value: 1, sent: false });
  });

  test("two requests with one id (a retry) are closed in order", async () => {
    await log.opened("s", "ex-1", "r1", { method: "local.send" });
    await log.opened("s", "ex-1", "r1", { method: "local.send" });
    await log.replied({ executionId: "ex-1", requestId: "r1", request: {}, handled: true, sent: true, reply: { kind: "ok", value: "first" } });
    await log.replied({ executionId: "ex-1", requestId: "r1", request: {}, handled: true, sent: true, reply: { kind: "ok", value: "second" } });
    expect(rows().map((r) => (r.reply as { value: string }).value)).toEqual(["first", "second"]);
  });
});
