import { createConnection, type Server, type Socket } from "node:net";
import { encodeFrame, FrameDecoder } from "@klbr/frame";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

let host: Host;
let server: Server;
let close: () => Promise<void>;
const connections = new Set<Socket>();

beforeAll(async () => {
  ({ host, close } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket);
  server.on("connection", (s: Socket) => {
    connections.add(s);
    s.on("close", () => connections.delete(s));
  });
});
afterAll(async () => {
  for (const s of connections) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
});

/** Send raw frames on a fresh connection; resolves with the replies once `count` arrived, or with what came before the daemon hung up. */
function raw(frames: unknown[], count: number): Promise<{ replies: unknown[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket: Socket = createConnection(host.layout.controlSocket);
    const decoder = new FrameDecoder();
    const replies: unknown[] = [];
    socket.on("data", (chunk) => {
      replies.push(...decoder.push(chunk));
      if (replies.length >= count) {
        socket.destroy();
        resolve({ replies, closed: false });
      }
    });
    socket.on("close", () => resolve({ replies, closed: true }));
    socket.on("error", () => undefined);
    socket.on("connect", () => {
      for (const f of frames) socket.write(encodeFrame(f));
    });
  });
}

describe("the control socket", () => {
  test("a frame that is not a request object gets a coded error and the daemon keeps serving", async () => {
    const { replies } = await raw([null, 42, ["op"], { op: "status" }, { id: 7, op: "status" }], 5);
    expect(replies.slice(0, 4)).toEqual(
      Array(4).fill({ id: null, ok: false, error: { code: "CONTROL_PROTOCOL", message: expect.stringContaining("request") } }),
    );
    expect(replies[4]).toMatchObject({ id: 7, ok: true });
  });

  test("bad fields are refused with CONTROL_PROTOCOL naming the value", async () => {
    const { replies } = await raw(
      [
        { id: 1, op: "exec", code: "1", session: "../escape" },
        { id: 2, op: "say", text: "hi", source: "the moon" },
        { id: 3, op: "interrupt", execution_id: 5 },
        { id: 4, op: "nope" },
      ],
      4,
    );
    const byId = new Map((replies as Array<{ id: number; error: { code: string; message: string } }>).map((r) => [r.id, r.error]));
    expect(byId.get(1)).toMatchObject({ code: "CONTROL_PROTOCOL", message: expect.stringContaining("../escape") });
    expect(byId.get(2)).toMatchObject({ code: "CONTROL_PROTOCOL", message: expect.stringContaining("the moon") });
    expect(byId.get(3)).toMatchObject({ code: "CONTROL_PROTOCOL", message: expect.stringContaining("execution_id") });
    expect(byId.get(4)).toMatchObject({ code: "CONTROL_PROTOCOL", message: expect.stringContaining("nope") });
    // Nothing was recorded or started for the refused requests.
    expect(((await host.status()) as { workbenches: Array<{ session_id: string }> }).workbenches.map((b) => b.session_id)).toEqual(["root"]);
  });

  test("stop_turn names a session; with no turn running (this daemon drives none) it answers stopping false", async () => {
    const { replies } = await raw(
      [
        { id: 1, op: "stop_turn", session: "../escape" },
        { id: 2, op: "stop_turn" },
        { id: 3, op: "stop_turn", session: "root" },
      ],
      3,
    );
    const byId = new Map((replies as Array<{ id: number }>).map((r) => [r.id, r]));
    expect(byId.get(1)).toMatchObject({ ok: false, error: { code: "CONTROL_PROTOCOL", message: expect.stringContaining("../escape") } });
    expect(byId.get(2)).toEqual({ id: 2, ok: true, value: { stopping: false } });
    expect(byId.get(3)).toEqual({ id: 3, ok: true, value: { stopping: false } });
  });

  test("a request on a connection the daemon already closed fails at once instead of hanging", async () => {
    const client = await ControlClient.connect(host.layout.controlSocket);
    expect(await client.request({ op: "status" })).toMatchObject({ data_dir: host.dataDir });
    for (const s of connections) s.destroy();
    await client.closed;
    await expect(client.request({ op: "status" })).rejects.toMatchObject({ code: "HOST_NOT_RUNNING" });
    client.close();
  });
});
