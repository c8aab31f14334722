import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseReplyValue, type ReplyMethod } from "@klbr/envelope";
import { renderObservation, type HeaderRevision } from "@klbr/header";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { orientationAdoptions, orientationCandidates, workItemAssessments, workItems } from "../src/db/schema";
import { headerChain } from "../src/store/headers";
import { sessionAgenda } from "../src/store/agenda";
import { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

let host: Host;
let close: () => Promise<void>;

const PRELUDE = [
  "import json",
  "from klbr.runtime import HostError",
  "def ok(x):",
  "    print(json.dumps(x))",
  "async def code(aw):",
  "    try:",
  "        await aw",
  "        return 'ok'",
  "    except HostError as e:",
  "        return e.code",
].join("\n");
const prepared = new Set<string>();

beforeAll(async () => {
  ({ host, close } = await startTestHost());
});
afterAll(async () => close());

/** Run a cell in a session and return what it printed, parsed as JSON (the cell must end ok). */
async function json(code: string, session = "root"): Promise<any> {
  // Helpers every cell uses: `ok(x)` prints the value as JSON, `code(aw)` the error code an awaitable raised.
  if (!prepared.has(session)) {
    prepared.add(session);
    expect((await host.execute(PRELUDE, session)).status).toBe("ok");
  }
  const r = await host.execute(code, session);
  if (r.status !== "ok") throw new Error(`cell ${r.status}: ${r.error ?? JSON.stringify(r.failure)}`);
  const out = r.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  return JSON.parse(out);
}

/** The error code each awaitable raises ('ok' when it succeeded), one cell. */
async function codes(calls: string[], session = "root"): Promise<string[]> {
  return json(`ok([${calls.map((c) => `await code(${c})`).join(", ")}])`, session);
}

const lastRevision = (session: string) => headerChain(host.db, session).at(-1) as HeaderRevision;
/** A reply as the cell got it, checked against the shape both languages pin (fixtures/replies). */
function shaped<T>(method: ReplyMethod, value: T): T {
  expect(parseReplyValue(method, value)).toEqual(value);
  return value;
}

describe("maintenance", () => {
  test("originate with evidence: an open item naming its execution and request; evidence.resolve finds it", async () => {
    const { event_id } = await host.postInput("the build broke");
    const reply = await json(`ok(await runtime.maintenance_originate('fix the build', 'it broke twice', ['event:${event_id}']))`);
    expect(shaped("maintenance.originate", reply)).toEqual({ work_item_id: expect.stringMatching(/^wi-/), status: "open" });
    const row = host.db.select().from(workItems).where(eq(workItems.id, reply.work_item_id)).get()!;
    expect(row).toMatchObject({ status: "open", purpose: "fix the build", reason: "it broke twice", evidenceRefs: [`event:${event_id}`], sessionId: "root" });
    expect(row.executionId).toMatch(/^ex-/);
    expect(row.requestId).not.toBe("");
    const resolved = await json(`ok(await runtime.resolve(['work_item:${reply.work_item_id}', 'work_item:nope']))`);
    expect(resolved.results[0]).toMatchObject({ ok: true, value: { work_item_id: reply.work_item_id, status: "open", evidence_refs: [`event:${event_id}`] } });
    expect(resolved.results[1]).toMatchObject({ ok: false, error: { code: "not_found" } });
  });

  test("a ref that does not resolve is refused naming the ref, and nothing is written", async () => {
    const before = host.db.select().from(workItems).all().length;
    const r = await json(
      "try:\n    await runtime.maintenance_originate('p', 'r', ['event:1', 'execution:missing-one'])\nexcept HostError as e:\n    ok([e.code, e.message])",
    );
    expect(r[0]).toBe("invalid_request");
    expect(r[1]).toContain("execution:missing-one");
    expect(await codes(["runtime.maintenance_originate('p', 'r', ['bogus'])"])).toEqual(["invalid_request"]);
    expect(host.db.select().from(workItems).all().length).toBe(before);
  });

  test("purpose and reason are 1..4096 bytes", async () => {
    expect(
      await codes([
        "runtime.maintenance_originate('x' * 4096, 'é' * 2048, [])",
        "runtime.maintenance_originate('x' * 4097, 'r', [])",
        "runtime.maintenance_originate('p', 'é' * 2049, [])",
        "runtime.maintenance_originate('', 'r', [])",
        "runtime.maintenance_originate('no evidence given', 'r')",
      ]),
    ).toEqual(["ok", "invalid_request", "invalid_request", "invalid_request", "ok"]);
  });

  test("assess: deferred keeps it open, the other outcomes close it; closed is conflict, unknown not_found", async () => {
    const ids: string[] = await json("ok([(await runtime.maintenance_originate(f'p{i}', 'r', []))['work_item_id'] for i in range(3)])");
    const [a, b, c] = ids as [string, string, string];
    expect(shaped("maintenance.assess", await json(`ok(await runtime.maintenance_assess('${a}', 'deferred'))`))).toEqual({ work_item_id: a, status: "open", outcome: "deferred" });
    expect(await json(`ok(await runtime.maintenance_assess('${a}', 'changed'))`)).toEqual({ work_item_id: a, status: "closed", outcome: "changed" });
    expect(await json(`ok(await runtime.maintenance_assess('${b}', 'no-change'))`)).toEqual({ work_item_id: b, status: "closed", outcome: "no-change" });
    expect(await json(`ok(await runtime.maintenance_assess('${c}', 'abandoned'))`)).toEqual({ work_item_id: c, status: "closed", outcome: "abandoned" });
    expect(
      await codes([`runtime.maintenance_assess('${a}', 'deferred')`, "runtime.maintenance_assess('wi-nope', 'changed')", `runtime.maintenance_assess('${b}', 'maybe')`]),
    ).toEqual(["conflict", "not_found", "invalid_request"]);
    const assessments = host.db.select().from(workItemAssessments).where(eq(workItemAssessments.workItemId, a)).all();
    expect(assessments.map((x) => [x.outcome, x.status])).toEqual([
      ["deferred", "open"],
      ["changed", "closed"],
    ]);
    expect(assessments.every((x) => x.executionId.startsWith("ex-") && x.requestId !== "")).toBe(true);
  });
});

describe("orientation", () => {
  test("stage, restage with the same text (same reply), another text (conflict); bad targets, scopes and sizes", async () => {
    const first = await json("ok(await runtime.orientation_stage('c-style', 'Prefer short answers.', 'style'))");
    expect(shaped("orientation.stage", first)).toEqual({
      candidate_id: "c-style",
      digest: createHash("sha256").update("Prefer short answers.").digest("hex"),
      target: "style",
      scope: { kind: "global" },
      status: "staged",
    });
    expect(await json("ok(await runtime.orientation_stage('c-style', 'Prefer short answers.', 'style', {'kind': 'global'}))")).toEqual(first);
    expect(
      await codes([
        "runtime.orientation_stage('c-style', 'Prefer long answers.', 'style')",
        "runtime.orientation_stage('c-style', 'Prefer short answers.', 'tone')",
        "runtime.orientation_stage('c-r1', 't', 'contract')",
        "runtime.orientation_stage('c-r2', 't', 'skills')",
        "runtime.orientation_stage('c-s1', 't', 'style', {'kind': 'peer', 'peer_id': 'p'})",
        "runtime.orientation_stage('c-s2', 't', 'style', {'kind': 'session'})",
        "runtime.orientation_stage('c-s3', 't', 'style', {'kind': 'global', 'x': 1})",
        "runtime.orientation_stage('c-big', 'x' * 65537, 'style')",
        "runtime.orientation_stage('c-empty', '', 'style')",
        "runtime.orientation_stage('c-t', 't', 'not a name')",
        "runtime.orientation_stage('c-max', 'x' * 65536, 'big')",
        "runtime.orientation_current({'kind': 'everyone'})",
      ]),
    ).toEqual(["conflict", "conflict", "invalid_request", "invalid_request", "invalid_request", "invalid_request", "invalid_request", "invalid_request", "invalid_request", "invalid_request", "ok", "invalid_request"]);
    const row = host.db.select().from(orientationCandidates).where(eq(orientationCandidates.id, "c-style")).get()!;
    expect(row).toMatchObject({ sessionId: "root", target: "style", scopeKind: "global", status: "staged" });
    expect(row.executionId).toMatch(/^ex-/);
  });

  test("adopt: the reply, the same reply for the same operation id, orientation.current and runtime.instructions at once", async () => {
    // Another session exists before the adoption: it must observe the change as the host's.
    expect(await json("ok(1)", "other")).toBe(1);
    const r = await json(
      [
        "await runtime.inspect()",
        "a = await runtime.orientation_adopt('c-style', 'op-style-1')",
        "again = await runtime.orientation_adopt('c-style', 'op-style-1')",
        "cur = await runtime.orientation_current()",
        "ins = await runtime.instructions()",
        "restage = await runtime.orientation_stage('c-style', 'Prefer short answers.', 'style')",
        "ok([a, again, cur, ins, restage])",
      ].join("\n"),
    );
    const [adopt, again, current, instructions, restage] = r;
    shaped("orientation.current", current);
    expect(shaped("orientation.adopt", adopt)).toEqual({
      candidate_id: "c-style",
      target: "style",
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      scope: { kind: "global" },
      status: "adopted",
      header_digest: instructions.digest,
    });
    expect(again).toEqual(adopt);
    expect(restage.status).toBe("adopted");
    expect(current).toEqual({
      scope: { kind: "global" },
      sources: [
        {
          target: "style",
          candidate_id: "c-style",
          digest: adopt.digest,
          text: "Prefer short answers.",
          adopted_at_ms: expect.any(Number),
          execution_id: expect.stringMatching(/^ex-/),
          operation_id: "op-style-1",
        },
      ],
    });
    expect(instructions.text).toContain("Prefer short answers.\n");
    expect(instructions.complete).toBe(true);
    // The header chain: the adopting session's revision names its execution and the request's step (2nd request).
    const revision = lastRevision("root");
    expect(revision.type).toBe("header_revision");
    expect(revision.digest).toBe(adopt.header_digest);
    expect(revision.actor).toEqual({ origin: "session", execution_id: current.sources[0].execution_id, step: 2 });
    expect(revision.sources.map((s) => s.name)).toEqual(["contract", "style", "skills"]);
    expect(renderObservation(revision)).toContain(`changed by this session (execution ${current.sources[0].execution_id}, step 2)`);
    const adoptions = host.db.select().from(orientationAdoptions).where(eq(orientationAdoptions.operationId, "op-style-1")).all();
    expect(adoptions).toHaveLength(1);
    expect(adoptions[0]).toMatchObject({ sessionId: "root", step: 2, executionId: current.sources[0].execution_id });

    // The other session sees it at its next request, as a host change.
    const before = headerChain(host.db, "other").length;
    const other = await json("ok(await runtime.instructions())", "other");
    expect(other.text).toContain("Prefer short answers.\n");
    const chain = headerChain(host.db, "other");
    expect(chain.length).toBe(before + 1);
    expect(lastRevision("other").actor.origin).toBe("host");
    expect(renderObservation(lastRevision("other"))).toContain("changed outside this transcript");
    // A session started after the adoption pins the text with it.
    expect((await json("ok(await runtime.instructions())", "late")).text).toContain("Prefer short answers.\n");
    expect(headerChain(host.db, "late")).toHaveLength(1);
  });

  test("operation ids: another candidate under a used id is conflict; unknown candidate not_found; other session's scope refused", async () => {
    await json("ok(await runtime.orientation_stage('c-mine', 'Only for other.', 'notes', {'kind': 'session', 'session_id': 'other'}))");
    await json("ok(await runtime.orientation_stage('c-x', 'x', 'xx'))");
    expect(
      await codes([
        "runtime.orientation_adopt('c-x', 'op-style-1')",
        "runtime.orientation_adopt('c-none', 'op-none')",
        "runtime.orientation_adopt('c-mine', 'op-mine-from-root')",
      ]),
    ).toEqual(["conflict", "not_found", "invalid_request"]);
    expect(host.db.select().from(orientationAdoptions).where(eq(orientationAdoptions.operationId, "op-mine-from-root")).all()).toHaveLength(0);
  });

  test("a session adoption reaches only that session; order is contract, targets by name (global first), skills", async () => {
    const adopt = await json(
      [
        "await runtime.orientation_stage('c-own-style', 'Root only style.', 'style', {'kind': 'session', 'session_id': 'root'})",
        "await runtime.orientation_stage('c-alpha', 'Alpha global.', 'alpha')",
        "await runtime.orientation_adopt('c-alpha', 'op-alpha')",
        "ok(await runtime.orientation_adopt('c-own-style', 'op-own-style'))",
      ].join("\n"),
    );
    expect(shaped("orientation.adopt", adopt).scope).toEqual({ kind: "session", session_id: "root" });
    const root = await json("ok(await runtime.instructions())");
    expect(root.digest).toBe(adopt.header_digest);
    const at = (s: string) => root.text.indexOf(s);
    expect(at("You are running inside klbr runtime")).toBe(0);
    expect(at("Alpha global.")).toBeGreaterThan(0);
    expect(at("Prefer short answers.")).toBeGreaterThan(at("Alpha global."));
    expect(at("Root only style.")).toBeGreaterThan(at("Prefer short answers."));
    expect(at("Skills available")).toBeGreaterThan(at("Root only style."));
    expect(lastRevision("root").sources.map((s) => s.name)).toEqual(["contract", "alpha", "style", "style (session)", "skills"]);
    const other = await json("ok(await runtime.instructions())", "other");
    expect(other.text).toContain("Alpha global.");
    expect(other.text).not.toContain("Root only style.");
    expect((await json("ok(await runtime.orientation_current({'kind': 'session', 'session_id': 'root'}))")).sources.map((s: any) => s.target)).toEqual(["style"]);
    expect((await json("ok(await runtime.orientation_current())")).sources.map((s: any) => s.target)).toEqual(["alpha", "style"]);
    // The other session adopts its own candidate.
    const mine = await json("ok(await runtime.orientation_adopt('c-mine', 'op-mine'))", "other");
    expect(mine).toMatchObject({ status: "adopted", scope: { kind: "session", session_id: "other" } });
    expect((await json("ok(await runtime.instructions())")).text).not.toContain("Only for other.");
  });

  test("a second adoption for the same target and scope replaces the first", async () => {
    await json("await runtime.orientation_stage('c-style-2', 'Prefer exact answers.', 'style')\nok(await runtime.orientation_adopt('c-style-2', 'op-style-2'))");
    const text = (await json("ok(await runtime.instructions())")).text as string;
    expect(text).toContain("Prefer exact answers.");
    expect(text).not.toContain("Prefer short answers.");
    const current = await json("ok(await runtime.orientation_current())");
    expect(current.sources.filter((s: any) => s.target === "style").map((s: any) => s.candidate_id)).toEqual(["c-style-2"]);
  });

  test("racing adoptions of one target and scope: both recorded, exactly one is the source", async () => {
    await json("await runtime.orientation_stage('c-race-a', 'Race A.', 'race')\nok(await runtime.orientation_stage('c-race-b', 'Race B.', 'race'))");
    const [a, b] = await Promise.all([
      json("ok(await runtime.orientation_adopt('c-race-a', 'op-race-a'))", "root"),
      json("ok(await runtime.orientation_adopt('c-race-b', 'op-race-b'))", "other"),
    ]);
    expect([a.status, b.status]).toEqual(["adopted", "adopted"]);
    const rows = host.db.select().from(orientationAdoptions).where(eq(orientationAdoptions.target, "race")).all();
    expect(rows.map((r) => r.operationId).sort()).toEqual(["op-race-a", "op-race-b"]);
    const winner = rows.reduce((x, y) => (y.id > x.id ? y : x)).candidateId;
    const current = await json("ok(await runtime.orientation_current())");
    expect(current.sources.filter((s: any) => s.target === "race").map((s: any) => s.candidate_id)).toEqual([winner]);
    for (const session of ["root", "other"]) {
      const text = (await json("ok(await runtime.instructions())", session)).text as string;
      expect([text.includes("Race A."), text.includes("Race B.")]).toEqual([winner === "c-race-a", winner === "c-race-b"]);
    }
  });

  test("the agenda lists a session's open work items and the candidates staged for its scope", async () => {
    const id = (await json("ok(await runtime.maintenance_originate('agenda item', 'because', []))", "agenda")).work_item_id;
    await json("ok(await runtime.orientation_stage('c-agenda', 'Agenda text.', 'agenda', {'kind': 'session', 'session_id': 'agenda'}))", "agenda");
    const agenda = sessionAgenda(host.db, "agenda");
    expect(agenda.work_items.map((w) => w.work_item_id)).toEqual([id]);
    expect(agenda.candidates.map((c) => c.candidate_id)).toContain("c-agenda");
    expect(agenda.candidates.map((c) => c.candidate_id)).toContain("c-x");
    expect(agenda.candidates.map((c) => c.candidate_id)).not.toContain("c-style");
    expect(sessionAgenda(host.db, "root").candidates.map((c) => c.candidate_id)).not.toContain("c-agenda");
    // The frontier block (C12) carries both, in C12's order, from the same rows.
    const block = await host.frontiers.block("agenda", Number.MAX_SAFE_INTEGER);
    expect(block).toMatch(new RegExp(`## open work items\nwork item ${id}: agenda item \\(reason: because\\)\n`));
    expect(block).toMatch(/## staged candidates\n(.*\n)*candidate c-agenda for agenda \(session agenda, digest [0-9a-f]{12}\): Agenda text\.\n/);
    // Open peer requests (registered by the peers family) take their place before open waits (issue 19 item 6).
    const order = ["## pending inputs", "## open work items", "## staged candidates", "## open peer requests", "## open waits", "## last cell"].map((t) => block.indexOf(t));
    expect(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!))).toBe(true);
    // klbr status shows every open work item and the adopted orientation of each scope.
    const status = (await host.status()) as { open_work_items: Array<{ work_item_id: string }>; orientation: Array<{ scope: unknown; sources: Array<{ target: string }> }> };
    expect(status.open_work_items.map((w) => w.work_item_id)).toContain(id);
    expect(status.orientation.map((o) => o.scope)).toEqual([{ kind: "global" }, { kind: "session", session_id: "other" }, { kind: "session", session_id: "root" }]);
    expect(status.orientation[0]!.sources.map((s) => s.target)).toEqual(["alpha", "race", "style"]);
  });
});

describe("orientation across a restart", () => {
  test("adopted sources stay; the restarted generation observes no change", async () => {
    const dataDir = tempDir();
    const workspace = tempDir("klbr-w-");
    const first = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills") });
    try {
      const r = await first.execute("await runtime.orientation_stage('c-keep', 'Kept across restarts.', 'keep')\nawait runtime.orientation_adopt('c-keep', 'op-keep')");
      expect(r.status).toBe("ok");
    } finally {
      await first.stop();
    }
    const second = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills") });
    try {
      const links = headerChain(second.db, "root").length;
      const r = await second.execute("(await runtime.instructions())['text']");
      expect(r.output.find((o) => o.stream === "result")?.text).toContain("Kept across restarts.");
      expect(headerChain(second.db, "root")).toHaveLength(links);
      expect(((await second.status()) as { orientation: unknown }).orientation).toEqual([
        { scope: { kind: "global" }, sources: [expect.objectContaining({ target: "keep", candidate_id: "c-keep", operation_id: "op-keep" })] },
      ]);
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
