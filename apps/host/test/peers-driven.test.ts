import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { executions, peers as peersTable } from "../src/db/schema";
import { startTestHost, tempDir } from "./helpers";

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

async function drivenHost() {
  server = await startScriptedServer();
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }),
  );
  const t = await startTestHost({ dataDir, drive: true });
  closers.push(t.close);
  return t;
}

/** The text of every message of a request the server received. */
function texts(body: Record<string, unknown>): string {
  return (body.messages as Array<{ content: unknown }>).map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

describe("peers driven by model turns (C13 with a route)", () => {
  test("a peer request wakes the peer's own turn, which reads it framed; its answer wakes the opener's turn", async () => {
    const { host } = await drivenHost();
    server!.push(
      // 1: root delegates, then waits durably.
      { calls: [{ code: "p = await runtime.peer_open('independent')\nawait runtime.peer_send(p['peer_id'], 'q1', 'compute 6*7')\nawait runtime.wait(None, 'for the peer')" }] },
      // 2: the peer's first request: it answers.
      { calls: [{ code: "await runtime.peer_submit_result('q1', {'answer': 6*7})" }] },
      // 3 and 4 (the peer's next request and the root's, in either order): no cell, the turns end.
      { text: "done" },
      { text: "done" },
    );
    await host.postInput("please delegate");
    await host.turns!.idle();
    const [peer] = host.db.select().from(peersTable).all();
    expect(server!.requests).toHaveLength(4);
    const peerRequests = server!.requests.filter((r) => texts(r.json!).includes("compute 6*7") && !texts(r.json!).includes("please delegate"));
    expect(peerRequests.length).toBe(2);
    // The peer read the request framed as the spec says, and never the sibling fields.
    expect(texts(peerRequests[0]!.json!)).toMatch(/\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · peer request q1 from root\]\ncompute 6\*7/);
    expect(texts(peerRequests[0]!.json!)).not.toContain("from_session");
    // The root's last request carries the answer, framed `peer result q1 from <peer session>`.
    const rootLast = server!.requests.filter((r) => texts(r.json!).includes("please delegate")).at(-1)!;
    expect(texts(rootLast.json!)).toContain(`· peer result q1 from ${peer!.sessionId}]\n{"answer":42}`);
    expect(await host.execute("(await runtime.peer_result('q1'))['result']")).toMatchObject({ output: [{ stream: "result", text: "{'answer': 42}" }] });
  }, 120_000);

  test("stop with drain lets the peer's current turn finish, every cell of it, then stops the peer", async () => {
    const { host, workspace } = await drivenHost();
    const gate = join(workspace, "gate");
    const opened = await host.execute("p = await runtime.peer_open('independent')\np['session_id']");
    const session = opened.output[0]!.text.slice(1, -1);
    server!.push(
      // The peer's turn: two cells in one reply; the first waits on a gate.
      { calls: [{ code: `import os, asyncio\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    await asyncio.sleep(0.01)\nfirst = True` }, { code: "second = True" }] },
      { text: "finished my turn" },
    );
    await host.execute("await runtime.peer_send(p['peer_id'], 'w1', 'work on this')");
    while (host.sessions.idle(session)) await new Promise((r) => setTimeout(r, 5));
    const stop = await host.execute("await runtime.peer_stop(p['peer_id'], drain=True)");
    expect(stop.output[0]!.text).toMatch(/^\{'peer_id': 'peer-[^']+', 'status': 'stopping'\}$/);
    expect(existsSync(gate)).toBe(false);
    writeFileSync(gate, "");
    await host.turns!.idle();
    await new Promise<void>((resolve) => {
      const check = () => (host.db.select().from(peersTable).all()[0]!.status === "stopped" ? resolve() : setTimeout(check, 5));
      check();
    });
    const cells = host.db.select().from(executions).all().filter((e) => e.sessionId === session);
    expect(cells.map((c) => [c.code.split("\n").at(-1), c.status])).toEqual([
      ["first = True", "ok"],
      ["second = True", "ok"],
    ]);
    expect(server!.requests).toHaveLength(2);
    await expect(host.execute("1", session)).rejects.toMatchObject({ code: "SESSION_STOPPED" });
  }, 120_000);
});
