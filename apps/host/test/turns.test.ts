import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assembleMessages, bodyMessages, buildRequestBody, prefixView, serializeBody, serializeMessages, MAX_CELL_SOURCE_BYTES, type Route } from "@klbr/driver";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { effects, frontiers, headerRecords, incidents, modelRequests, transcriptRecords, waits } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { reassembleRequest } from "../src/runtime/reassemble";
import { readLog } from "../src/store/log-view";
import { loadTranscript } from "../src/store/transcript";
import { startTestHost, tempDir } from "./helpers";

const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

function writeRoute(dataDir: string, route: Record<string, unknown> = {}) {
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${server!.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000, ...route }] }),
  );
}

async function drivenHost(route: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const dataDir = tempDir();
  writeRoute(dataDir, route);
  const t = await startTestHost({ dataDir, drive: true, ...extra });
  closers.push(t.close);
  return t;
}

/** Say something as the operator and wait until the session's turns have settled. */
async function say(host: Host, text: string) {
  await host.postInput(text);
  await host.turns!.idle();
}

function rows(host: Host) {
  return host.db.select().from(modelRequests).orderBy(modelRequests.startedAtMs, modelRequests.id).all();
}

/** Every request re-assembled from the log alone has the digest on its row, which is the digest of what the server received. */
async function expectReassembles(host: Host) {
  const all = rows(host);
  const ok = all.filter((r) => r.status !== "error" || r.error);
  for (const row of ok) expect(sha((await reassembleRequest(host.store, row)).text)).toBe(row.bodyDigest);
  return all;
}

describe("model turns (C10)", () => {
  test("a whole session: input, cells, a reviewed send, a wait, woken by input, a fold; every request re-assembled byte for byte", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    server.push(
      { text: "Hello! Sending you a note.", calls: [{ code: "r = await runtime.send('hello operator')\nr['status']" }] },
      { text: "Sent. Tell me when to continue." },
    );
    await say(host, "hi there");
    const sent = host.db.select().from(effects).all();
    expect(sent).toMatchObject([{ text: "hello operator", status: "confirmed" }]);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "model_ended_turn", state: "waiting", deadlineMs: null });
    // The tool result the model read is the framed cell result.
    const second = server.requests[1]!.json!;
    const tool = (second.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool")!;
    expect(tool.content).toMatch(/^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ · ran \d+(ms|\.\ds)\]\n'confirmed'\n$/);

    server.push({ calls: [{ code: "x = 41\nawait runtime.wait(None, 'until the operator says go')" }] });
    await say(host, "wait for me");
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "until the operator says go", state: "waiting" });

    server.push(
      { text: "Noting work.", calls: [{ code: "w = await runtime.maintenance_originate('tidy the logs', 'they grew past a gigabyte')\nw['status']" }, { code: "c = await runtime.orientation_stage('c1', 'Be brief.\\n', 'style')\nc['status']" }] },
      { text: "Folding.", calls: [{ code: "f = await runtime.frontier_select()\nf['installs']" }] },
      { text: "Folded; x is still here." },
    );
    await say(host, "go");
    const [frontier] = host.db.select().from(frontiers).all();
    expect(frontier).toMatchObject({ reason: "selected", installedAtMs: expect.any(Number) });
    // The block (C12): what is still open, in the spec's order, then the last cell the fold covers and its result.
    expect(frontier!.block).toMatch(/## pending inputs\n\(none\)\n## open work items\nwork item \S+: tidy the logs \(reason: they grew past a gigabyte\)\n## staged candidates\ncandidate c1 for style \(global, digest [0-9a-f]{12}\): Be brief\.\n## open peer requests\n\(none\)\n## open waits\n\(none\)\n## last cell\n```python\nc = await runtime\.orientation_stage/);
    // ...the last cell's framed result; sections other families register follow it.
    expect(frontier!.block).toMatch(/## last cell\n```python\n[^`]*```\n\[[^\]]+ · ran [^\]]+\]\n'staged'\n(## |$)/);
    const pins = host.db.select().from(headerRecords).where(eq(headerRecords.type, "header_pin")).all().filter((p) => p.sessionId === "root");
    expect(pins.map((p) => (p.record as { reason: string }).reason)).toEqual(["session_start", "fold"]);

    const all = await expectReassembles(host);
    expect(all).toHaveLength(6);
    expect(all.every((r) => r.status === "ok")).toBe(true);
    // What the server received is what the rows say was sent, and the shared-prefix figure is the server's.
    all.forEach((row, i) => {
      expect(sha(server!.requests[i]!.body)).toBe(row.bodyDigest);
      expect(row.sharedPrefixBytes).toBe(server!.requests[i]!.shared_prefix_bytes);
      expect(row.usage).toMatchObject({ shape: "openai_chat", prompt_tokens: expect.any(Number), cached_prompt_tokens: expect.any(Number) });
    });
    // No fold between requests 1..4: each one's messages are a byte-prefix of the next one's.
    const msgs = server.requests.map((r) => serializeMessages(bodyMessages(r.json!)));
    for (let i = 0; i < 4; i++) expect(msgs[i + 1]!.startsWith(msgs[i]!)).toBe(true);
    // After the fold: the new pin, then the frontier block, then the selecting cell's result.
    const sixth = server.requests[5]!.json!.messages as Array<{ role: string; content: string }>;
    expect(sixth[1]!.content).toMatch(/^\[[^\]]+ · frontier\]\nThis transcript was folded/);
    expect(sixth[2]).toMatchObject({ role: "user", content: expect.stringContaining("'next_request'") });
    expect(msgs[5]!.startsWith(msgs[4]!)).toBe(false);
    // klbr log shows each request with its usage as reported.
    const logged = readLog(host.sqlite).filter((e) => e.kind === "model.request");
    expect(logged).toHaveLength(6);
    expect(logged[1]).toMatchObject({ status: "ok", route: "scripted", usage: { cached_prompt_tokens: expect.any(Number) }, shared_prefix_bytes: all[1]!.sharedPrefixBytes });
  });

  test.each(["responses", "anthropic"] as const)("a session over a %s route: tool calls, results and re-assembly byte for byte", async (api) => {
    server = await startScriptedServer();
    const { host } = await drivenHost({ api, base_url: api === "anthropic" ? server.url : `${server.url}/v1` });
    server.push({ text: "Two cells.", calls: [{ code: "a = 20" }, { code: "a * 2 + 2" }] }, { text: "It is 42." });
    await say(host, "compute something");
    const all = await expectReassembles(host);
    expect(all.map((r) => [r.api, r.status])).toEqual([[api, "ok"], [api, "ok"]]);
    all.forEach((row, i) => expect(sha(server!.requests[i]!.body)).toBe(row.bodyDigest));
    expect(all[1]!.usage).toMatchObject({ shape: api === "anthropic" ? "anthropic" : "openai_responses", cached_prompt_tokens: expect.any(Number) });
    const second = server.requests[1]!.json!;
    const results =
      api === "anthropic"
        ? (second.messages as Array<{ content: Array<{ type: string; content?: string }> }>).flatMap((m) => m.content).filter((b) => b.type === "tool_result").map((b) => b.content!)
        : (second.input as Array<{ type?: string; output?: string }>).filter((i) => i.type === "function_call_output").map((i) => i.output!);
    expect(results).toHaveLength(2);
    expect(results[1]).toMatch(/ran [^\]]+\]\n42\n$/);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "model_ended_turn" });
  });

  test("an input attention.plan ignores starts no turn and never reaches the model; the next operator input does", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    await host.postInput("ambient chatter", { source: "discord.ambient" });
    await host.turns!.idle();
    expect(server.requests).toHaveLength(0);
    server.push({ text: "hello" });
    await say(host, "hi");
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.body).not.toContain("ambient chatter");
  });

  test("a peer session is driven on the default route too (C13): asked by the root, it answers, and the root is woken by the result", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    const peers = new Set<string>();
    host.subscribe((n) => {
      if (n.type === "model" && n.session_id !== "root") peers.add(n.session_id);
    });
    server.push(
      { text: "Delegating.", calls: [{ code: "p = await runtime.peer_open('independent')\nawait runtime.peer_send(p['peer_id'], 'q1', 'what is 6*7?')\nawait runtime.wait(None, 'for the peer')" }] },
      { text: "Answering.", calls: [{ code: "await runtime.peer_submit_result('q1', {'answer': 6 * 7})" }] },
      // The peer's next request and the root's (woken by the result) may come in either order: same reply.
      { text: "done" },
      { text: "done" },
    );
    await say(host, "ask a peer");
    while (server.requests.length < 4) {
      await new Promise((r) => setTimeout(r, 20));
      await host.turns!.idle();
    }
    await host.turns!.idle();
    expect(peers.size).toBe(1);
    const [peer] = [...peers];
    const bySession = (id: string) => rows(host).filter((r) => r.sessionId === id);
    expect(bySession(peer!).map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(bySession("root").map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(server.requests[1]!.body).toContain("peer request q1 from root");
    const rootSecond = server.requests.find((r, i) => i > 1 && r.body.includes("Delegating."))!;
    expect(rootSecond.body).toContain(`peer result q1 from ${peer}`);
    await expectReassembles(host);
  });

  test("429 and 5xx are retried by the client and counted on the row", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    server.push({ status: 429 }, { status: 502 }, { text: "made it" });
    await say(host, "hello");
    expect(rows(host)).toMatchObject([{ status: "ok", retries: 2 }]);
  });

  test("a route that is down fails the turn durably with an incident; the next wake retries it", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    server.push({ status: 503 }, { status: 503 }, { status: 503 });
    await say(host, "anyone there?");
    expect(rows(host)).toMatchObject([{ status: "error", retries: 2, error: { code: "DRIVER_ROUTE_FAILED", status: 503 } }]);
    expect(host.db.select().from(incidents).all().filter((i) => i.kind === "model.route_failed")).toHaveLength(1);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "route_failed", state: "waiting" });
    server.push({ text: "back now" });
    await say(host, "try again");
    const after = rows(host);
    expect(after.map((r) => r.status)).toEqual(["error", "ok"]);
    // The retried request carries both inputs; the failed one left no reply in the transcript.
    expect(server.requests.at(-1)!.body).toContain("anyone there?");
    expect(host.db.select().from(transcriptRecords).all().filter((r) => r.kind === "reply")).toHaveLength(1);
  });

  test("a malformed reply fails the request with DRIVER_MALFORMED_REPLY", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    server.push({ raw: "data: {\"choices\": [oops\n\n" });
    await say(host, "hello");
    expect(rows(host)).toMatchObject([{ status: "error", error: { code: "DRIVER_MALFORMED_REPLY" } }]);
  });

  test("a cell over 262,144 bytes is refused and the model is told why; bad arguments too", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost();
    server.push({ calls: [{ code: `# ${"x".repeat(MAX_CELL_SOURCE_BYTES)}` }, { arguments: "{not json" }, { code: "1 + 1" }] }, { text: "ok" });
    await say(host, "go");
    const tools = (server.requests[1]!.json!.messages as Array<{ role: string; content: string }>).filter((m) => m.role === "tool").map((m) => m.content);
    expect(tools[0]).toContain(`not run: the cell source is ${MAX_CELL_SOURCE_BYTES + 2} bytes; the limit is 262144 bytes`);
    expect(tools[1]).toContain("not run: the arguments are not valid JSON");
    expect(tools[2]).toMatch(/ran .*\]\n2\n$/);
    expect(host.db.select().from(transcriptRecords).all().map((r) => r.kind)).toEqual(["input", "reply", "refusal", "refusal", "cell", "reply"]);
    await expectReassembles(host);
  });

  test("max_cells_per_turn ends the turn with an incident and a wait", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost({}, { drive: { maxCellsPerTurn: 2 } });
    server.push({ calls: [{ code: "1" }] }, { calls: [{ code: "2" }] }, { calls: [{ code: "3" }] });
    await say(host, "loop");
    expect(host.db.select().from(incidents).all().filter((i) => i.kind === "model.max_cells_per_turn")).toHaveLength(1);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "max_cells_per_turn", state: "waiting" });
    expect(host.db.select().from(transcriptRecords).all().map((r) => r.kind)).toEqual(["input", "reply", "cell", "reply", "cell"]);
  });

  test("a budget fold covers the oldest records when a request passes 80% of the context", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost({ context_tokens: 3000 });
    for (let i = 0; i < 6; i++) server.push({ calls: [{ code: `print("${"y".repeat(900)}")` }] });
    server.push({ text: "done" });
    await say(host, "fill the context");
    const [f] = host.db.select().from(frontiers).all();
    expect(f).toMatchObject({ reason: "budget", executionId: null });
    for (const r of server.requests) expect(Math.ceil(Buffer.byteLength(r.body) / 4)).toBeLessThanOrEqual(0.8 * 3000 + 600);
    const folded = rows(host).find((r) => r.frontierId === f!.id)!;
    expect(Math.ceil(folded.bodyBytes / 4)).toBeLessThan(0.8 * 3000);
    await expectReassembles(host);
  });

  test("a budget fold sizes the body that will be sent: every fold lands under 50%, and steady growth folds at most ceil(growth / 30%) times (issue 19 item 5)", async () => {
    server = await startScriptedServer();
    const context = 2000;
    const { host } = await drivenHost({ context_tokens: context });
    const steps = 14;
    for (let i = 0; i < steps; i++) server.push({ calls: [{ code: `print("${"y".repeat(300 + ((i * 53) % 250))}")` }] });
    server.push({ text: "done" });
    await say(host, "fill the context, steadily");
    const all = rows(host);
    expect(all).toHaveLength(steps + 1);
    const budget = host.db.select().from(frontiers).all().filter((f) => f.reason === "budget");
    expect(budget.length).toBeGreaterThan(1);
    // The request each fold was made for is under 50% of the context, as the server received it.
    for (const f of budget) {
      const i = all.findIndex((r) => r.frontierId === f.id);
      expect(Math.ceil(Buffer.byteLength(server.requests[i]!.body) / 4)).toBeLessThan(0.5 * context);
    }
    // Growth: what the transcript added over the session, sized as one unfolded request would carry it.
    const first = all[0]!;
    const last = all.at(-1)!;
    const header = (host.db.select().from(headerRecords).where(eq(headerRecords.id, first.headerRecordId)).get()!.record as { text: string }).text;
    const unfolded = serializeBody(buildRequestBody(last.profile as Route, assembleMessages({ header, frontier: null, records: loadTranscript(host.sqlite, last.sessionId, 0, last.throughSeq) })));
    const growth = Math.ceil(Buffer.byteLength(unfolded) / 4) - Math.ceil(first.bodyBytes / 4);
    expect(budget.length).toBeLessThanOrEqual(Math.ceil(growth / (0.3 * context)));
    await expectReassembles(host);
  });

  test("an anthropic route's shared_prefix_bytes reads the messages without the moving cache_control marker (issue 19 item 11)", async () => {
    server = await startScriptedServer();
    const { host } = await drivenHost({ api: "anthropic", base_url: server.url });
    server.push({ calls: [{ code: "1 + 1" }] }, { calls: [{ code: "2 + 2" }] }, { text: "4." });
    await say(host, "add");
    const all = rows(host);
    expect(all).toHaveLength(3);
    const unmarked = (body: string) => serializeBody(prefixView("anthropic", JSON.parse(body) as Record<string, unknown>));
    for (let i = 1; i < all.length; i++) {
      // The earlier request's messages are all shared: its unmarked body up to the closing "]}".
      const previous = unmarked(server.requests[i - 1]!.body);
      expect(unmarked(server.requests[i]!.body).startsWith(previous.slice(0, -2))).toBe(true);
      expect(all[i]!.sharedPrefixBytes).toBe(Buffer.byteLength(previous) - 2);
    }
  });

  test("a route whose key variable is unset is a clear error at start", async () => {
    server = await startScriptedServer();
    const dataDir = tempDir();
    writeRoute(dataDir, { api_key_env: "KLBR_TEST_SURELY_UNSET_KEY" });
    await expect(startTestHost({ dataDir, drive: true })).rejects.toMatchObject({ code: "DRIVER_KEY_UNSET", message: expect.stringContaining("$KLBR_TEST_SURELY_UNSET_KEY") });
  });

  test("a restart mid-turn resumes from the log: the reply is not requested again and the cell is not run again", async () => {
    server = await startScriptedServer();
    const first = await drivenHost();
    const marker = join(first.workspace, "runs");
    server.push({ calls: [{ code: `open(${JSON.stringify(marker)}, "a").write("run\\n")\nimport time\ntime.sleep(60)` }] });
    void first.host.postInput("start something long");
    while (!existsSync(marker)) await new Promise((r) => setTimeout(r, 20));
    await first.host.stop();
    server.push({ text: "I see the cell was cut short." });
    const second = await startTestHost({ dataDir: first.dataDir, workspace: first.workspace, drive: true });
    closers.push(second.close);
    await new Promise((r) => setTimeout(r, 0));
    await second.host.turns!.idle();
    expect(server.requests).toHaveLength(2);
    const tool = (server.requests[1]!.json!.messages as Array<{ role: string; content: string }>).find((m) => m.role === "tool")!;
    expect(tool.content).toMatch(/\[status: (failed|interrupted)/);
    expect(second.host.db.select().from(transcriptRecords).all().map((r) => r.kind)).toEqual(["input", "reply", "cell", "reply"]);
    expect(readFileSync(marker, "utf8")).toBe("run\n");
    await expectReassembles(second.host);
  });
});
