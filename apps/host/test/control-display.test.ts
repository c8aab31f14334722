// C20 on the control socket (CONTRACTS "Display on the control API"): the exec reply's displays
// and displays_dropped, `origin` on exec, live `display` events to an exec's own watcher and to
// watch_output in order with the output and before the reply, and blob_get by digest and prefix.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import { executions } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import type { ExecutionReport } from "../src/runtime/completion";
import { startTestHost } from "./helpers";

const HELPERS = readFileSync(new URL("./display-cells.py", import.meta.url), "utf8");

let host: Host;
let server: Server;
let close: () => Promise<void>;
const clients: ControlClient[] = [];
beforeAll(async () => {
  ({ host, close } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
}, 120_000);
afterAll(async () => {
  for (const c of clients) c.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close?.();
});

async function client(): Promise<ControlClient> {
  const c = await ControlClient.connect(host.layout.controlSocket);
  clients.push(c);
  return c;
}

type Event = { type: string; execution_id: string; session?: string; text?: string; display?: ExecutionReport["displays"][number] };

describe("displays on the control socket", () => {
  test("exec with live: output and display events in order, all before the reply, which lists the same displays", async () => {
    const c = await client();
    const id = "ex-ctl-display-1";
    const events: Event[] = [];
    let atReply = -1;
    c.listen((e) => {
      const event = e as Event;
      if (event.execution_id === id) events.push(event);
    });
    const code = `${HELPERS}\nprint('one')\ndisplay(Picture(4, 3))\nprint('two')\ndisplay(Picture(4, 3))`;
    const report = (await c.request({ op: "exec", code, execution_id: id, live: true }).then((r) => {
      atReply = events.length;
      return r;
    })) as ExecutionReport;
    expect(report.status).toBe("ok");
    expect(report.origin).toBe("exec");
    expect(report.displays_dropped).toBe(0);
    expect(report.displays).toHaveLength(2);
    expect(atReply).toBe(events.length);
    const order = events.map((e) => (e.type === "display" ? `display:${e.display!.seq}` : e.text!.trim())).filter((t) => t !== "");
    expect(order).toEqual(["one", "display:0", "two", "display:1"]);
    const shown = events.filter((e) => e.type === "display");
    expect(shown.map((e) => e.display)).toEqual(report.displays);
    expect(shown[0]).toMatchObject({ session: "root" });
    expect(report.displays[0]!.images[0]).toMatchObject({ mime: "image/png", width: 4, height: 3 });
  }, 60_000);

  test("watch_output of a session gets another client's cell's displays", async () => {
    const watcher = await client();
    const seen: Event[] = [];
    expect(await watcher.watchOutput({ session: "root" }, (e) => seen.push(e as Event))).toBe(true);
    const runner = await client();
    const report = (await runner.request({ op: "exec", code: "display('watched')", execution_id: "ex-ctl-display-2" })) as ExecutionReport;
    const deadline = Date.now() + 10_000;
    while (!seen.some((e) => e.type === "display" && e.execution_id === report.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(seen.filter((e) => e.type === "display" && e.execution_id === report.id).map((e) => e.display)).toEqual(report.displays);
  }, 60_000);

  test("origin: what the client says, stored on the record; a bad one refused with CONTROL_PROTOCOL", async () => {
    const c = await client();
    const report = (await c.request({ op: "exec", code: "1", origin: "mcp" })) as ExecutionReport;
    expect(report.origin).toBe("mcp");
    expect(host.db.select().from(executions).where(eq(executions.id, report.id)).get()!.origin).toBe("mcp");
    await expect(c.request({ op: "exec", code: "1", origin: "Not An Origin!" })).rejects.toMatchObject({ code: "CONTROL_PROTOCOL" });
    await expect(c.request({ op: "exec", code: "1", origin: 7 } as never)).rejects.toMatchObject({ code: "CONTROL_PROTOCOL" });
  }, 60_000);

  test("blob_get: an image's bytes and a bundle's JSON by digest or a 12-digit prefix; unknown, short or malformed: DISPLAY_NOT_FOUND", async () => {
    const c = await client();
    const report = (await c.request({ op: "exec", code: `${HELPERS}\ndisplay(Picture(5, 7))` })) as ExecutionReport;
    const image = report.displays[0]!.images[0]!;
    const got = (await c.request({ op: "blob_get", digest: image.digest })) as { digest: string; media_type: string; base64: string };
    const bytes = Buffer.from(got.base64, "base64");
    expect(got).toMatchObject({ digest: image.digest, media_type: "image/png" });
    expect(`sha256:${createHash("sha256").update(bytes).digest("hex")}`).toBe(image.digest);
    expect(bytes.readUInt32BE(16)).toBe(5);
    const prefix = image.digest.slice("sha256:".length, "sha256:".length + 12);
    expect(((await c.request({ op: "blob_get", digest: prefix })) as { digest: string }).digest).toBe(image.digest);
    const bundle = (await c.request({ op: "blob_get", digest: report.displays[0]!.digest })) as { media_type: string; base64: string };
    expect(bundle.media_type).toBe("application/vnd.klbr.display+json");
    expect(JSON.parse(Buffer.from(bundle.base64, "base64").toString()).images["image/png"]).toBe(image.digest);
    for (const digest of [`sha256:${"0".repeat(64)}`, "0123456789ab", "abc", "sha256:xyz", ""]) {
      await expect(c.request({ op: "blob_get", digest })).rejects.toMatchObject({ code: "DISPLAY_NOT_FOUND" });
    }
    await expect(c.request({ op: "blob_get" } as never)).rejects.toMatchObject({ code: "CONTROL_PROTOCOL" });
  }, 60_000);
});
