// The control API's log_page (what `klbr mcp`'s session_log reads): one session's durable log,
// oldest first, a page at a time.
import type { Server } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

let host: Host;
let server: Server;
let client: ControlClient;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, close } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket);
  client = await ControlClient.connect(host.layout.controlSocket);
});
afterAll(async () => {
  client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
});

type Page = { session: string; page: number; page_size: number; pages: number; total: number; records: Array<{ kind: string; session_id?: string; code?: string }> };

test("pages a session's records oldest first, and only that session's", async () => {
  for (const n of [1, 2, 3, 4, 5]) await host.execute(`n = ${n}`, "paged");
  await host.execute("other = 1", "elsewhere");
  const all = (await client.request({ op: "log_page", session: "paged", page_size: 200 })) as Page;
  const cells = all.records.filter((r) => r.kind === "execution").map((r) => r.code);
  expect(cells).toEqual(["n = 1", "n = 2", "n = 3", "n = 4", "n = 5"]);
  expect(all.records.every((r) => r.session_id === "paged")).toBe(true);
  const first = (await client.request({ op: "log_page", session: "paged", page_size: 2 })) as Page;
  expect(first).toMatchObject({ session: "paged", page: 1, page_size: 2, total: all.total, pages: Math.ceil(all.total / 2) });
  expect(first.records).toEqual(all.records.slice(0, 2));
  const last = (await client.request({ op: "log_page", session: "paged", page_size: 2, page: first.pages })) as Page;
  expect(last.records.at(-1)).toMatchObject({ kind: "execution", code: "n = 5" });
  expect(((await client.request({ op: "log_page", session: "paged", page_size: 2, page: first.pages + 1 })) as Page).records).toEqual([]);
  expect(((await client.request({ op: "log_page", session: "never-used" })) as Page)).toMatchObject({ total: 0, pages: 0, records: [] });
});

test("bad pages, sizes and sessions are refused with CONTROL_PROTOCOL naming the value", async () => {
  for (const [req, named] of [
    [{ op: "log_page", session: "../x" }, "../x"],
    [{ op: "log_page" }, "session"],
    [{ op: "log_page", session: "paged", page: 0 }, "page"],
    [{ op: "log_page", session: "paged", page: 1.5 }, "1.5"],
    [{ op: "log_page", session: "paged", page_size: 201 }, "201"],
  ] as const) {
    await expect(client.request(req as never)).rejects.toMatchObject({ code: "CONTROL_PROTOCOL", message: expect.stringContaining(named) });
  }
});
