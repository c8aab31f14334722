import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { events as eventsTable, hostRequests, peerRequests } from "../src/db/schema";
import type { Notification } from "../src/requests/context";
import type { Host } from "../src/runtime/host";
import { headerChain } from "../src/store/headers";
import { openPeerRequests } from "../src/store/peer-requests";
import { callInCell, startTestHost, until } from "./helpers";

let host: Host;
let workspace: string;
let close: () => Promise<void>;
const notes: Notification[] = [];

beforeAll(async () => {
  ({ host, workspace, close } = await startTestHost());
  host.subscribe((n) => notes.push(n));
});
afterAll(async () => close());

const call = (session: string, code: string): Promise<any> => callInCell(host, session, code);

const py = (v: unknown) => JSON.stringify(v);

async function openPeer(): Promise<{ peer_id: string; session_id: string; status: string }> {
  return call("root", "await runtime.peer_open('independent')");
}

describe("two sessions, through real cells", () => {
  let peer: { peer_id: string; session_id: string };

  test("peer.open: a new session with its own header pinned now; its workbench starts when a cell runs there", async () => {
    const opened = await openPeer();
    expect(opened).toEqual({ peer_id: expect.stringMatching(/^[A-Za-z0-9_.-]{1,128}$/), session_id: expect.stringMatching(/^[A-Za-z0-9_.-]{1,128}$/), status: "open" });
    expect(opened.session_id).not.toBe("root");
    peer = opened;
    expect(headerChain(host.db, peer.session_id)[0]).toMatchObject({ type: "header_pin", reason: "session_start" });
    expect(host.sessions.idle(peer.session_id)).toBe(true);
    const info = await call(peer.session_id, "await runtime.inspect()");
    expect(info).toMatchObject({ session_id: peer.session_id, generation: "g-1" });
    // Its own namespace: what root defines is not there.
    await call("root", "secret_of_root = 1\nNone");
    expect(await call(peer.session_id, "'secret_of_root' in dir()")).toBe(false);
  });

  test("peer.send: the peer is woken with the request framed `peer request <id> from <session>`; the opener reads it answered", async () => {
    // The peer waits durably, as a session with nothing to do does.
    expect((await host.execute("await runtime.wait(None, reason='idle')", peer.session_id)).status).toBe("yielded");
    notes.length = 0;
    const sent = await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r1', 'what is 6*7?')`);
    expect(sent).toEqual({ request_id: "r1", status: "queued", event_id: expect.any(Number) });
    const input = notes.find((n) => n.type === "input" && n.session_id === peer.session_id);
    expect(input).toMatchObject({ type: "input", event_id: sent.event_id, source: "peer" });
    const wake = notes.find((n) => n.type === "wake" && n.session_id === peer.session_id) as Extract<Notification, { type: "wake" }>;
    expect(wake.woken_by).toBe(`event:${sent.event_id}`);
    expect(wake.inputs).toHaveLength(1);
    expect(wake.inputs[0]).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · peer request r1 from root\]\nwhat is 6\*7\?$/);
    // The durable event holds exactly what arrived, never the frame.
    const event = host.db.select().from(eventsTable).where(eq(eventsTable.id, sent.event_id)).get()!;
    expect(event).toMatchObject({ sessionId: peer.session_id, direction: "in", source: "peer" });
    expect(event.payload).toEqual({ text: "what is 6*7?", request_id: "r1", from_session: "root" });

    expect(await call("root", "await runtime.peer_result('r1')")).toEqual({ request_id: "r1", status: "pending" });
    expect(openPeerRequests(host.db, "root").outgoing.map((r) => r.request_id)).toEqual(["r1"]);
    expect(openPeerRequests(host.db, peer.session_id).incoming.map((r) => [r.request_id, r.from_session])).toEqual([["r1", "root"]]);

    notes.length = 0;
    expect(await call(peer.session_id, "await runtime.peer_submit_result('r1', {'answer': 6*7})")).toEqual({ request_id: "r1", status: "answered" });
    // The opener got the answer as an input, framed `peer result <id> from <peer session>`.
    const back = notes.find((n) => n.type === "input" && n.session_id === "root") as Extract<Notification, { type: "input" }>;
    expect(back).toMatchObject({ source: "peer" });
    const framed = await host.wakes.takePendingInputs("root");
    expect(framed.at(-1)).toMatch(new RegExp(`^\\[[^\\]]+ · peer result r1 from ${peer.session_id.replace(/[.]/g, "\\.")}\\]\\n\\{"answer":42\\}$`));
    expect(await call("root", "await runtime.peer_result('r1')")).toEqual({ request_id: "r1", status: "answered", result: { answer: 42 } });
    expect(openPeerRequests(host.db, "root")).toEqual({ outgoing: [], incoming: [] });
    // Answer once.
    expect(await call(peer.session_id, "await runtime.peer_submit_result('r1', {'answer': 0})")).toMatchObject({ error: "conflict" });
    expect(await call("root", "await runtime.peer_result('r1')")).toMatchObject({ result: { answer: 42 } });
  });

  test("peer.result with wait_ms waits inside the cell while both sessions keep running, and returns the answer", async () => {
    await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r2', 'slow one')`);
    const waiting = call("root", "await runtime.peer_result('r2', wait_ms=600000)");
    await until(() => host.peerSignals.size === 1);
    // The host is not blocked: the peer runs cells, a third session too.
    expect(await call(peer.session_id, "1 + 1")).toBe(2);
    expect(await call("other", "'free'")).toBe("free");
    expect(await call(peer.session_id, "await runtime.peer_submit_result('r2', {'done': True})")).toEqual({ request_id: "r2", status: "answered" });
    expect(await waiting).toEqual({ request_id: "r2", status: "answered", result: { done: true } });
    expect(host.peerSignals.size).toBe(0);
  });

  test("a wait that runs out says pending; an interrupt of the waiting cell ends the wait at once", async () => {
    await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r3', 'never answered in time')`);
    expect(await call("root", "await runtime.peer_result('r3', wait_ms=30)")).toEqual({ request_id: "r3", status: "pending" });
    const cell = host.execute("await runtime.peer_result('r3', wait_ms=600000)", "root");
    await until(() => host.peerSignals.size === 1);
    const interrupted = await host.interrupt({ sessionId: "root" });
    expect(interrupted).toMatchObject({ rung: "message" });
    const report = await cell;
    expect(report.status).toBe("interrupted");
    expect(host.peerSignals.size).toBe(0);
    expect(await call("root", "await runtime.peer_result('r3')")).toEqual({ request_id: "r3", status: "pending" });
  });

  test("peer.cancel before an answer: cancelled, and the peer can no longer answer; after an answer: conflict", async () => {
    expect(await call("root", "await runtime.peer_cancel('r3')")).toEqual({ request_id: "r3", status: "cancelled" });
    expect(await call("root", "await runtime.peer_cancel('r3')")).toEqual({ request_id: "r3", status: "cancelled" });
    expect(await call(peer.session_id, "await runtime.peer_submit_result('r3', {'late': True})")).toMatchObject({ error: "conflict" });
    expect(await call("root", "await runtime.peer_result('r3')")).toEqual({ request_id: "r3", status: "cancelled" });
    expect(await call("root", "await runtime.peer_cancel('r1')")).toMatchObject({ error: "conflict" });
    expect(await call("root", "await runtime.peer_result('r1')")).toMatchObject({ status: "answered" });
    expect(await call("root", "await runtime.peer_cancel('nope')")).toMatchObject({ error: "not_found" });
  });

  test("a cancel wakes a cell waiting on that request with the cancelled status", async () => {
    await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r4', 'to be declined')`);
    const waiting = call("root", "await runtime.peer_result('r4', wait_ms=600000)");
    await until(() => host.peerSignals.size === 1);
    notes.length = 0;
    // The peer declines: the opener gets a `peer result` input saying so, and is woken.
    expect(await call(peer.session_id, "await runtime.peer_cancel('r4')")).toEqual({ request_id: "r4", status: "cancelled" });
    expect(await waiting).toEqual({ request_id: "r4", status: "cancelled" });
    expect(notes.some((n) => n.type === "input" && n.session_id === "root" && n.source === "peer")).toBe(true);
    expect((await host.wakes.takePendingInputs("root")).at(-1)).toMatch(/ · peer result r4 from [^\]]+\]\ncancelled$/);
    expect(host.db.select().from(peerRequests).where(eq(peerRequests.requestId, "r4")).get()).toMatchObject({ status: "cancelled", cancelledBy: "peer" });
  });

  test("peer.send is idempotent by request id: the same content gets the same reply, other content a conflict", async () => {
    const first = await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r5', 'once')`);
    const again = await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r5', 'once')`);
    expect(again).toEqual(first);
    expect(await call("root", `await runtime.peer_send(${py(peer.peer_id)}, 'r5', 'twice')`)).toMatchObject({ error: "conflict" });
    expect(host.db.select().from(peerRequests).where(eq(peerRequests.requestId, "r5")).all()).toHaveLength(1);
    expect(host.db.select().from(eventsTable).all().filter((e) => (e.payload as { request_id?: string }).request_id === "r5")).toHaveLength(1);
  });

  test("the aliases agents.open and peer.message work and are recorded under peer.open and peer.send", async () => {
    const opened = await call("root", "await runtime.request('agents.open', mode='independent', evidence=[])");
    expect(opened).toMatchObject({ status: "open" });
    const sent = await call("root", `await runtime.request('peer.message', peer_id=${py(opened.peer_id)}, request_id='via-alias', content='hi', evidence=[])`);
    expect(sent).toMatchObject({ request_id: "via-alias", status: "queued" });
    const methods = host.db.select().from(hostRequests).all().map((r) => [r.method, (r.request as { method: string }).method]);
    expect(methods).toContainEqual(["peer.open", "peer.open"]);
    expect(methods).toContainEqual(["peer.send", "peer.send"]);
    expect(methods.flat()).not.toContain("agents.open");
    expect(methods.flat()).not.toContain("peer.message");
    expect(await call("root", `await runtime.peer_stop(${py(opened.peer_id)}, drain=False)`)).toEqual({ peer_id: opened.peer_id, status: "stopped" });
  });

  test("peer.get and peer.list: C13's shapes, for the opener only", async () => {
    const got = await call("root", `await runtime.peer_get(${py(peer.peer_id)})`);
    expect(got).toEqual({
      peer_id: peer.peer_id,
      session_id: peer.session_id,
      mode: "independent",
      status: "open",
      opened_at_ms: expect.any(Number),
      requests: { pending: 1, answered: 2, cancelled: 2 },
    });
    const list = await call("root", "await runtime.peer_list()");
    expect(Object.keys(list)).toEqual(["peers"]);
    expect(list.peers[0]).toEqual(got);
    // A session sees only the peers it opened.
    expect(await call(peer.session_id, "await runtime.peer_list()")).toEqual({ peers: [] });
    expect(await call(peer.session_id, `await runtime.peer_get(${py(peer.peer_id)})`)).toMatchObject({ error: "not_found" });
    expect(await call(peer.session_id, `await runtime.peer_send(${py(peer.peer_id)}, 'x', 'to myself')`)).toMatchObject({ error: "not_found" });
    expect(await call("root", "await runtime.peer_get('peer-none')")).toMatchObject({ error: "not_found" });
    expect(await call("root", "await runtime.peer_submit_result('r5', {})")).toMatchObject({ error: "not_found" });
  });
});

describe("the frontier block", () => {
  test("lists a session's open peer requests in both directions, with their words", async () => {
    const root = await host.frontiers.block("root", 0);
    const section = root.slice(root.indexOf("## open peer requests"));
    expect(section).toMatch(/^## open peer requests\nsent, awaiting a result: request r5 to ps-\S+ \(peer peer-\S+\), sent \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\nonce\n/);
    expect(section).not.toContain("request via-alias"); // cancelled when its peer was stopped
    expect(section).not.toContain("request r1 ");
    const peers = ((await host.status()) as { peers: Array<{ session_id: string; requests: { pending: number } }> }).peers.filter((p) => p.requests.pending === 1);
    const blocks = await Promise.all(peers.map((p) => host.frontiers.block(p.session_id, 0)));
    const peerSession = peers[blocks.findIndex((b) => b.includes("r5"))]!.session_id;
    expect(await host.frontiers.block(peerSession, 0)).toMatch(/\nreceived, not answered: \[[^\]]+ · peer request r5 from root\]\nonce\n/);
  });
});

describe("limits", () => {
  test("mode, content, result, wait_ms and evidence are checked; the refusal names the value", async () => {
    const opened = await openPeer();
    const p = py(opened.peer_id);
    expect(await call("root", "await runtime.peer_open('shared')")).toMatchObject({ error: "invalid_request", message: expect.stringContaining("shared") });
    expect(await call("root", `await runtime.peer_send(${p}, 'l1', '')`)).toMatchObject({ error: "invalid_request" });
    expect(await call("root", `await runtime.peer_send(${p}, 'l2', 'x' * 65537)`)).toMatchObject({ error: "invalid_request", message: expect.stringContaining("at most 65536 UTF-8 bytes") });
    expect(await call("root", `await runtime.peer_send(${p}, 'l3', 'é' * 32768)`)).toMatchObject({ status: "queued" });
    // Refused requests leave nothing behind.
    expect(host.db.select().from(peerRequests).all().filter((r) => ["l1", "l2"].includes(r.requestId))).toEqual([]);
    expect(await call("root", "await runtime.peer_result('l3', wait_ms=600001)")).toMatchObject({ error: "invalid_request" });
    expect(await call("root", "await runtime.peer_result('l3', wait_ms=1)")).toMatchObject({ status: "pending" });
    // One byte past 262,144 encoded: {"x":"yyy..."} is 8 bytes around the string.
    expect(await call(opened.session_id, "await runtime.peer_submit_result('l3', {'x': 'y' * (262144 - 7)})")).toMatchObject({ error: "invalid_request", message: expect.stringContaining("got 262145") });
    // Exactly 262,144 bytes encoded.
    expect(await call(opened.session_id, "await runtime.peer_submit_result('l3', {'x': 'y' * (262144 - 8)})")).toEqual({ request_id: "l3", status: "answered" });
    expect(await call("root", "await runtime.peer_open('independent', evidence=['event:999999'])")).toMatchObject({ error: "invalid_request", message: expect.stringContaining("event:999999") });
    expect(await call("root", `await runtime.peer_send(${p}, 'l4', 'x', evidence=[7])`)).toMatchObject({ error: "invalid_request" });
    const event = host.db.select().from(eventsTable).get()!;
    expect(await call("root", `await runtime.peer_send(${p}, 'l5', 'with evidence', evidence=['event:${event.id}'])`)).toMatchObject({ status: "queued" });
    expect(await call("root", `await runtime.peer_stop(${p}, drain=True)`)).toEqual({ peer_id: opened.peer_id, status: "stopped" });
  });

  test("at most 8 open peers per host: the 9th is limit_exceeded; a stopped one frees its slot", async () => {
    const live = async () => ((await host.status()) as { peers: Array<{ status: string }> }).peers.filter((p) => p.status !== "stopped").length;
    const opened: string[] = [];
    while ((await live()) < 8) opened.push((await openPeer()).peer_id);
    expect(await call("root", "await runtime.peer_open('independent')")).toMatchObject({ error: "limit_exceeded" });
    const victim = opened[0] ?? ((await host.status()) as { peers: Array<{ peer_id: string; status: string }> }).peers.find((p) => p.status === "open")!.peer_id;
    expect(await call("root", `await runtime.peer_stop(${py(victim)}, drain=False)`)).toMatchObject({ status: "stopped" });
    const again = await openPeer();
    expect(again.status).toBe("open");
    for (const id of [...opened.slice(1), again.peer_id]) await call("root", `await runtime.peer_stop(${py(id)}, drain=False)`);
  });
});

describe("peer.stop", () => {
  test("with drain, on a peer running a cell: stopping until that cell ends normally, then stopped; pending requests cancelled at once", async () => {
    const opened = await openPeer();
    const gate = join(workspace, "drain-gate");
    await call("root", `await runtime.peer_send(${py(opened.peer_id)}, 'd1', 'pending at stop')`);
    const running = host.execute(`import os, asyncio\nwhile not os.path.exists(${py(gate)}):\n    await asyncio.sleep(0.01)\n'finished'`, opened.session_id);
    await until(async () => !host.sessions.idle(opened.session_id) && ((await host.status()) as { sessions: Array<{ session_id: string; running: string | null }> }).sessions.some((s) => s.session_id === opened.session_id && s.running !== null));
    const stopped = new Promise<void>((resolve) => host.subscribe((n) => n.type === "session.stopped" && n.session_id === opened.session_id && resolve()));
    expect(await call("root", `await runtime.peer_stop(${py(opened.peer_id)}, drain=True)`)).toEqual({ peer_id: opened.peer_id, status: "stopping" });
    expect(await call("root", "await runtime.peer_result('d1')")).toEqual({ request_id: "d1", status: "cancelled" });
    expect(await call("root", `await runtime.peer_get(${py(opened.peer_id)})`)).toMatchObject({ status: "stopping", requests: { pending: 0, cancelled: 1 } });
    expect(await call("root", `await runtime.peer_send(${py(opened.peer_id)}, 'd2', 'too late')`)).toMatchObject({ error: "conflict" });
    // A cell asked for after the stop does not run.
    await expect(host.execute("1", opened.session_id)).rejects.toMatchObject({ code: "SESSION_STOPPED" });
    expect(existsSync(gate)).toBe(false);
    writeFileSync(gate, "");
    const report = await running;
    expect(report).toMatchObject({ status: "ok", output: [{ stream: "result", text: "'finished'" }] });
    await stopped;
    expect(await call("root", `await runtime.peer_get(${py(opened.peer_id)})`)).toMatchObject({ status: "stopped" });
    const session = ((await host.status()) as { sessions: Array<Record<string, unknown>> }).sessions.find((s) => s.session_id === opened.session_id);
    expect(session).toMatchObject({ kind: "peer", status: "stopped", state: "dead" });
  });

  test("without drain: the running cell and its workbench are hard-stopped now; the peer refuses sends and cells", async () => {
    const opened = await openPeer();
    await call("root", `await runtime.peer_send(${py(opened.peer_id)}, 'h1', 'pending at stop')`);
    const running = host.execute("import time\nwhile True:\n    time.sleep(0.05)", opened.session_id);
    await until(async () => ((await host.status()) as { sessions: Array<{ session_id: string; running: string | null }> }).sessions.some((s) => s.session_id === opened.session_id && s.running !== null));
    expect(await call("root", `await runtime.peer_stop(${py(opened.peer_id)}, drain=False)`)).toEqual({ peer_id: opened.peer_id, status: "stopped" });
    const report = await running;
    expect(["failed", "interrupted"]).toContain(report.status);
    expect(await call("root", "await runtime.peer_result('h1')")).toEqual({ request_id: "h1", status: "cancelled" });
    expect(await call("root", `await runtime.peer_send(${py(opened.peer_id)}, 'h2', 'no')`)).toMatchObject({ error: "conflict" });
    await expect(host.execute("1", opened.session_id)).rejects.toMatchObject({ code: "SESSION_STOPPED" });
    expect(await call("root", `await runtime.peer_stop(${py(opened.peer_id)}, drain=True)`)).toEqual({ peer_id: opened.peer_id, status: "stopped" });
    const session = ((await host.status()) as { sessions: Array<Record<string, unknown>> }).sessions.find((s) => s.session_id === opened.session_id);
    expect(session).toMatchObject({ status: "stopped", state: "dead" });
  });
});
