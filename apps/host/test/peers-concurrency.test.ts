import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Host } from "../src/runtime/host";
import { readLog, type LogEntry } from "../src/store/log-view";
import { startTestHost } from "./helpers";

let host: Host;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ host, close } = await startTestHost());
});
afterAll(async () => close());

/** Run a cell whose last line's value is printed as JSON; the cell must end ok. */
async function json(session: string, code: string): Promise<any> {
  const lines = code.trim().split("\n");
  const last = lines.pop()!;
  const report = await host.execute(["import json as _json", ...lines, `print(_json.dumps(${last}))`].join("\n"), session);
  if (report.status !== "ok") throw new Error(`cell in ${session} ended ${report.status}: ${report.error ?? JSON.stringify(report.failure)}`);
  return JSON.parse(report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("").trim().split("\n").at(-1)!);
}

const PEERS = 8;
const ROUNDS = 3;

describe("eight peers running cells while the root session runs cells", () => {
  test("no cross-talk: every request, result, input and namespace stays in its own session, checked from the log", async () => {
    const peers: Array<{ peer_id: string; session_id: string }> = await json(
      "root",
      `[await runtime.peer_open('independent') for _ in range(${PEERS})]`,
    );
    expect(new Set(peers.map((p) => p.session_id)).size).toBe(PEERS);

    // Each peer answers its own requests as they arrive (a request not sent yet is not_found: it
    // tries again), remembers in its namespace what it answered, and says who answered.
    const peerWork = peers.map(async (peer, i) => {
      for (let j = 0; j < ROUNDS; j++) {
        await json(
          peer.session_id,
          [
            "import asyncio",
            "me = (await runtime.inspect())['session_id']",
            "answered = globals().setdefault('answered', [])",
            "while True:",
            "    try:",
            `        r = await runtime.peer_submit_result('t-${i}-${j}', {'by': me, 'task': 't-${i}-${j}', 'value': ${i} * 100 + ${j}})`,
            "        break",
            "    except Exception as e:",
            "        if getattr(e, 'code', None) != 'not_found':",
            "            raise",
            "        await asyncio.sleep(0.01)",
            `answered.append('t-${i}-${j}')`,
            "r",
          ].join("\n"),
        );
      }
    });

    // Meanwhile the root sends each round and waits for its answers, cell by cell.
    const rootWork = (async () => {
      const got: Record<string, { by: string; task: string; value: number }> = {};
      for (let j = 0; j < ROUNDS; j++) {
        const sends = peers.map((p, i) => `await runtime.peer_send(${JSON.stringify(p.peer_id)}, 't-${i}-${j}', 'task ${i}.${j} for ${p.session_id}')`);
        const sent = await json("root", `[${sends.join(", ")}]`);
        expect(sent.map((s: { status: string }) => s.status)).toEqual(Array(PEERS).fill("queued"));
        const results = await json("root", `[await runtime.peer_result(f't-{i}-${j}', wait_ms=600000) for i in range(${PEERS})]`);
        for (const r of results) {
          expect(r.status).toBe("answered");
          got[r.request_id] = r.result;
        }
        expect(await json("root", "(await runtime.inspect())['session_id']")).toBe("root");
      }
      return got;
    })();

    const [got] = await Promise.all([rootWork, ...peerWork]);
    for (let i = 0; i < PEERS; i++) {
      for (let j = 0; j < ROUNDS; j++) expect(got[`t-${i}-${j}`]).toEqual({ by: peers[i]!.session_id, task: `t-${i}-${j}`, value: i * 100 + j });
      // Each namespace holds what that peer answered, nothing of another's.
      expect(await json(peers[i]!.session_id, "answered")).toEqual(Array.from({ length: ROUNDS }, (_, j) => `t-${i}-${j}`));
    }
    expect(await json("root", "'answered' in globals()")).toBe(false);

    // From the durable log (on PostgreSQL, the test store's mirror of it: helpers.ts).
    const log = readLog(host.sqlite);
    const sessionOfExecution = new Map(log.filter((e) => e.kind === "execution").map((e) => [e.id as string, e.session_id as string]));
    const indexOf = new Map(peers.map((p, i) => [p.session_id, i]));
    const byKind = (kind: string) => log.filter((e: LogEntry) => e.kind === kind);

    const requests = byKind("peer_request");
    expect(requests).toHaveLength(PEERS * ROUNDS);
    for (const r of requests) {
      const i = Number(String(r.request_id).split("-")[1]);
      expect(r).toMatchObject({ status: "answered", from_session: "root", to_session: peers[i]!.session_id, peer_id: peers[i]!.peer_id });
      expect((r.result as { by: string }).by).toBe(r.to_session);
      expect(sessionOfExecution.get(r.sent_by_execution_id as string)).toBe("root");
      expect(sessionOfExecution.get(r.answered_by_execution_id as string)).toBe(r.to_session);
    }

    // Every host request came from a cell of the session its method belongs to.
    for (const q of byKind("request")) {
      const session = sessionOfExecution.get(q.execution_id as string)!;
      if (q.method === "peer.submit_result") {
        expect(indexOf.has(session)).toBe(true);
        const reply = q.reply as { kind: string; value?: { request_id: string }; code?: string };
        if (reply.kind === "ok") expect(reply.value!.request_id.startsWith(`t-${indexOf.get(session)}-`)).toBe(true);
        else expect(reply.code).toBe("not_found");
      } else if (q.method === "peer.send" || q.method === "peer.result" || q.method === "peer.open") {
        expect(session).toBe("root");
      }
    }

    // Inputs: each peer got exactly its own requests; the root got exactly one result per request.
    const inputs = byKind("input");
    for (const [session, i] of indexOf) {
      const mine = inputs.filter((e) => e.session_id === session).map((e) => e.payload as { request_id: string; from_session: string });
      expect(mine.map((p) => p.request_id).sort()).toEqual(Array.from({ length: ROUNDS }, (_, j) => `t-${i}-${j}`));
      expect(new Set(mine.map((p) => p.from_session))).toEqual(new Set(["root"]));
    }
    const results = inputs.filter((e) => e.session_id === "root").map((e) => e.payload as { result_of: string; from_session: string });
    expect(results).toHaveLength(PEERS * ROUNDS);
    for (const p of results) expect(p.from_session).toBe(peers[Number(p.result_of.split("-")[1])]!.session_id);

    // Every execution of a peer session ran in that session's own workbench generation line.
    for (const e of byKind("execution")) expect(e.status).toBe("ok");
  }, 240_000);
});
