// C16 live output to a control client that does not read: the host queues at most
// MAX_LIVE_BACKLOG_BYTES for it, then drops its live messages and tells it (seq skips them, and
// dropped_bytes counts their bytes, in its next event or once it has read everything), while the
// cell runs on and another client on the same execution gets every message. Synchronised on what
// the host's socket holds and on the messages the reading client got, never on a sleep.
import { createConnection, type Server, type Socket } from "node:net";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeFrame, FrameDecoder } from "@klbr/frame";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { LiveOutputEvent } from "../src/cli/live-output";
import { ControlClient } from "../src/control/client";
import { MAX_LIVE_BACKLOG_BYTES } from "../src/control/protocol";
import { serveControl } from "../src/control/server";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

let host: Host;
let server: Server;
let close: () => Promise<void>;
let workspace: string;
/** The host's side of every control connection. */
const accepted = new Set<Socket>();

beforeAll(async () => {
  ({ host, close, workspace } = await startTestHost());
  server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  server.on("connection", (s: Socket) => {
    accepted.add(s);
    s.on("close", () => accepted.delete(s));
  });
}, 180_000);
afterAll(async () => {
  for (const s of accepted) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await close();
}, 180_000);

async function until(check: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A raw control connection (it can stop reading); `frames` holds what it read, in order. */
async function rawClient() {
  const socket = createConnection(host.layout.controlSocket);
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const decoder = new FrameDecoder();
  const frames: Array<{ id?: number; event?: LiveOutputEvent }> = [];
  socket.on("data", (chunk) => void frames.push(...(decoder.push(chunk) as typeof frames)));
  const events = () => frames.flatMap((f) => (f.event ? [f.event] : []));
  const replied = (id: number) => frames.some((f) => f.id === id);
  return { socket, frames, events, replied };
}

/** A raw connection watching one execution. */
async function slowWatcher(executionId: string) {
  const client = await rawClient();
  client.socket.write(encodeFrame({ id: 1, op: "watch_output", execution_id: executionId }));
  await until(() => client.replied(1), "the watch to be accepted");
  return client;
}

/** A cell writing one full message (16 KiB) per pacing interval until `gate` exists; it writes how much it wrote to `count` (its record keeps only 64 KiB, C7). */
function floodUntil(gate: string, count: string): string {
  return `import os, sys, time\nn = 0\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    sys.stdout.write('x' * 16383 + '\\n')\n    n += 1\n    time.sleep(0.05)\nopen(${JSON.stringify(count)}, 'w').write(str(n * 16384))`;
}

const backlogged = () => [...accepted].find((s) => s.writableLength > MAX_LIVE_BACKLOG_BYTES);

const bytesOf = (events: LiveOutputEvent[]) => events.reduce((n, e) => n + Buffer.byteLength(e.text) + e.dropped_bytes, 0);

test("a client that does not read loses live output past its backlog and is told; the cell and the other client go on", async () => {
  const id = "ex-backlog";
  const gate = join(workspace, "gate-backlog");
  const slow = await slowWatcher(id);
  slow.socket.pause(); // from here it reads nothing: the kernel's buffers fill, then the host's queue
  const fast = await ControlClient.connect(host.layout.controlSocket);
  const seen: LiveOutputEvent[] = [];
  fast.listen((e) => void ((e as LiveOutputEvent).execution_id === id && seen.push(e as LiveOutputEvent)));
  const count = join(workspace, "written");
  const code = floodUntil(gate, count);
  // Counted where the host publishes, in the same pass that offers each message to the slow client:
  // the reading client's own count lags (under load by several messages), so messages it got after
  // the bound may have been published before it.
  let published = 0;
  const unwatch = host.liveOutput!.watch({ executionId: id }, () => void published++);
  const done = fast.request({ op: "exec", code, execution_id: id, live: true }) as Promise<{ status: string }>;

  await until(() => backlogged() !== undefined, "the slow client's queue to pass its bound");
  const atBound = published;
  // The cell goes on publishing messages the slow one now misses.
  await until(() => published >= atBound + 3, "three more messages published past the bound");
  unwatch();
  writeFileSync(gate, "");
  const report = await done; // the cell ended while the slow client still read nothing
  expect(report.status).toBe("ok");
  const written = Number(readFileSync(count, "utf8"));
  // The host never queued more than its bound (and the one message that crossed it) for the slow client.
  expect(backlogged()!.writableLength).toBeLessThan(MAX_LIVE_BACKLOG_BYTES + 64 * 1024);

  // The reading client: every message, numbered without a gap, all the cell wrote accounted for.
  expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i));
  expect(bytesOf(seen)).toBe(written);

  // The slow client, once it reads: what was queued, then what it missed, said in bytes.
  slow.socket.resume();
  await until(() => bytesOf(slow.events()) === written, "the slow client to account for every byte");
  const seqs = slow.events().map((e) => e.seq);
  expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
  // It lost messages (under load as few as one, which its final notice then equals in number) ...
  const read = new Set(slow.events().filter((e) => e.text.length > 0).map((e) => e.seq));
  expect(seen.filter((e) => e.text.length > 0 && !read.has(e.seq)).length).toBeGreaterThan(0);
  expect(slow.events().reduce((n, e) => n + e.dropped_bytes, 0)).toBeGreaterThan(seen.reduce((n, e) => n + e.dropped_bytes, 0)); // ... and was told
  // Its last event is the notice of what it missed at the end: no text, the last message's seq.
  const last = slow.events().at(-1)!;
  expect({ ...last, text: last.text.length }).toMatchObject({ type: "output", execution_id: id, text: 0, seq: seen.at(-1)!.seq });
  expect(last.dropped_bytes).toBeGreaterThan(0);
  fast.close();
  slow.socket.destroy();
}, 300_000);

test("an exec client that does not read is told what it missed before its reply, and nothing after", async () => {
  const id = "ex-backlog-exec";
  const gate = join(workspace, "gate-backlog-exec");
  const count = join(workspace, "written-exec");
  const slow = await rawClient();
  slow.socket.pause();
  slow.socket.write(encodeFrame({ id: 7, op: "exec", code: floodUntil(gate, count), execution_id: id, live: true }));
  let published = 0;
  const stop = host.liveOutput!.watch({ executionId: id }, () => void published++);
  await until(() => backlogged() !== undefined, "the exec client's queue to pass its bound");
  const atBound = published;
  await until(() => published >= atBound + 2, "two more messages the exec client misses");
  stop();
  writeFileSync(gate, "");
  const row = () => host.sqlite.prepare("select status from executions where id = ?").get(id) as { status: string } | undefined;
  await until(() => row() !== undefined && row()!.status !== "running", "the cell to end");
  slow.socket.resume();
  await until(() => slow.replied(7), "the exec reply");
  const written = Number(readFileSync(count, "utf8"));
  const at = slow.frames.findIndex((f) => f.id === 7);
  const before = slow.frames.slice(0, at).flatMap((f) => (f.event ? [f.event] : []));
  expect(slow.frames.slice(at + 1)).toEqual([]);
  expect(bytesOf(before)).toBe(written);
  const last = before.at(-1)!;
  expect({ ...last, text: last.text.length }).toMatchObject({ execution_id: id, text: 0 });
  expect(last.dropped_bytes).toBeGreaterThan(0);
  slow.socket.destroy();
}, 300_000);
