// Replies and events on the control socket are frames of at most 1 MiB (C1), but what they carry
// is not bounded by one: an exec reply lists every display's text (each up to about 1 MiB, C20),
// a log_page holds up to 200 records of 64 KiB outputs. Such a message is sent with its long
// strings cut to fit (the durable log keeps them whole); the daemon never dies of one.
import type { Server } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import type { ExecutionReport } from "../src/runtime/completion";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

let host: Host;
let server: Server;
let close: () => Promise<void>;
let c: ControlClient;
beforeAll(async () => {
  ({ host, close } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  c = await ControlClient.connect(host.layout.controlSocket);
}, 120_000);
afterAll(async () => {
  c?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close?.();
});

/** The daemon still answers, on a new connection. */
async function stillAnswers(): Promise<void> {
  const probe = await ControlClient.connect(host.layout.controlSocket);
  try {
    expect(await probe.request({ op: "status" })).toHaveProperty("sessions");
  } finally {
    probe.close();
  }
}

describe("control messages past one frame", () => {
  test("an exec whose displays' texts pass 1 MiB together: the reply and the live events come cut, the record whole", async () => {
    const events: Array<{ type: string; execution_id: string; display?: { text: string } }> = [];
    c.listen((e) => events.push(e as (typeof events)[number]));
    const id = "ex-fit-displays";
    const code = "class Big:\n    def __init__(self, c): self.c = c\n    def __repr__(self): return self.c * 2_000_000\ndisplay(Big('a'), Big('b'))\nprint('p' * 60_000)";
    const report = (await c.request({ op: "exec", code, execution_id: id, live: true })) as ExecutionReport;
    expect(report.status).toBe("ok");
    expect(report.displays).toHaveLength(2);
    expect(report.displays[0]!.text.startsWith("aaaa")).toBe(true);
    expect(report.displays[1]!.text.startsWith("bbbb")).toBe(true);
    expect(report.displays[1]!.text).toMatch(/bytes cut to fit one control frame/);
    const live = events.filter((e) => e.type === "display" && e.execution_id === id);
    expect(live).toHaveLength(2);
    // The stored refs are whole: what the model reads is not what the control frame could carry.
    const stored = host.sqlite.prepare("SELECT displays FROM executions WHERE id = ?").get(id) as { displays: string };
    const refs = JSON.parse(stored.displays) as Array<{ text: string }>;
    expect(refs[1]!.text.length).toBeGreaterThan(1_000_000);
    expect(refs[1]!.text).not.toMatch(/cut to fit one control frame/);
    await stillAnswers();
  }, 120_000);

  test("a log_page of large records: answered, their long strings cut", async () => {
    for (let i = 0; i < 20; i++) {
      const r = (await c.request({ op: "exec", code: `print('y' * 65_000)`, session: "fit-log" })) as ExecutionReport;
      expect(r.status).toBe("ok");
    }
    const page = (await c.request({ op: "log_page", session: "fit-log", page_size: 200 })) as { total: number; records: Array<{ kind: string; output?: Array<{ text: string }> }> };
    const cells = page.records.filter((r) => r.kind === "execution");
    expect(cells).toHaveLength(20);
    expect(cells[0]!.output![0]!.text).toMatch(/^y+…\[\d+ bytes cut to fit one control frame/);
    await stillAnswers();
  }, 180_000);
});
