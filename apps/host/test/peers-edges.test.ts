import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { callInCell, startTestHost, until } from "./helpers";

// Edges of peer.send idempotency and the C13 peer slot count that the broader peers suite
// tests away from the edge (issue 25 item 1 survivors).

let host: Host;
let workspace: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, workspace, close } = await startTestHost());
});
afterAll(async () => close());

const call = (session: string, code: string): Promise<any> => callInCell(host, session, code);

const py = (v: unknown) => JSON.stringify(v);
type PeerStatus = { peer_id: string; session_id: string; status: string };
const peers = async () => ((await host.status()) as { peers: PeerStatus[] }).peers;
const openPeer = (): Promise<PeerStatus> => call("root", "await runtime.peer_open('independent')");

describe("peer edges", () => {
  test("peer.send with a used request_id, the same content but another peer_id, is a conflict", async () => {
    const a = await openPeer();
    const b = await openPeer();
    expect(await call("root", `await runtime.peer_send(${py(a.peer_id)}, 'same', 'hello')`)).toMatchObject({ status: "queued" });
    const other = await call("root", `await runtime.peer_send(${py(b.peer_id)}, 'same', 'hello')`);
    expect(other, "a repeat to another recipient must not be taken as the same send").toMatchObject({ error: "conflict" });
    expect(other.message).toContain(a.peer_id);
    for (const p of [a, b]) await call("root", `await runtime.peer_stop(${py(p.peer_id)}, drain=False)`);
  });

  test("with 8 peers holding slots, one of them stopping, a 9th peer.open is limit_exceeded", async () => {
    const live = async () => (await peers()).filter((p) => p.status !== "stopped").length;
    const opened: PeerStatus[] = [];
    while ((await live()) < 8) opened.push(await openPeer());
    // Put one into `stopping`: a drain stop while its cell waits on a gate file.
    const draining = opened[0]!;
    const gate = join(workspace, "edge-drain-gate");
    const running = host.execute(`import os, asyncio\nwhile not os.path.exists(${py(gate)}):\n    await asyncio.sleep(0.01)\n'done'`, draining.session_id);
    await until(async () => ((await host.status()) as { sessions: Array<{ session_id: string; running: string | null }> }).sessions.some((s) => s.session_id === draining.session_id && s.running !== null));
    expect(await call("root", `await runtime.peer_stop(${py(draining.peer_id)}, drain=True)`)).toEqual({ peer_id: draining.peer_id, status: "stopping" });
    expect((await peers()).filter((p) => p.status === "stopping").map((p) => p.peer_id)).toEqual([draining.peer_id]);
    expect(await live()).toBe(8);
    const ninth = await call("root", "await runtime.peer_open('independent')");
    expect(ninth, "a stopping peer still holds its slot (C13)").toMatchObject({ error: "limit_exceeded" });
    writeFileSync(gate, "");
    expect(await running).toMatchObject({ status: "ok" });
    await until(async () => (await peers()).find((p) => p.peer_id === draining.peer_id)?.status === "stopped");
    const tenth = await openPeer();
    expect(tenth.status).toBe("open");
    for (const p of [...opened.slice(1), tenth]) await call("root", `await runtime.peer_stop(${py(p.peer_id)}, drain=False)`);
  });
});
