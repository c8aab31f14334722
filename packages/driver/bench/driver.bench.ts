// pnpm --filter @klbr/driver bench
// 1. Prefix stability and cache share over a scripted 200-step session with 5 instruction changes
//    and 2 folds, against a baseline that rebuilds the system prompt from the current sources each
//    step (same script, same folds, same scripted provider reporting cache from the shared prefix).
// 2. Assembly cost of step N at 100 vs 1,000 records (incremental assembler), beside the pure
//    full re-assembly.
import { performance } from "node:perf_hooks";
import { fold, joinSources, observe, pinAtStart, type HeaderRecord, type HeaderRevision, type SourceInput } from "@klbr/header";
import { startScriptedServer } from "../../../test-support/scripted-server.ts";
import {
  assembleMessages,
  bodyDigest,
  bodyMessages,
  buildRequestBody,
  callRoute,
  composeFrontierBlock,
  parseRoute,
  RequestAssembler,
  serializeBody,
  serializeMessages,
  sharedPrefixBytes,
  type FrontierRef,
  type Route,
  type TranscriptRecord,
} from "../src/index.ts";

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const STEPS = 200;
const CHANGES = new Map<number, string>([
  [25, "skill written"],
  [60, "orientation adopted"],
  [95, "source edited"],
  [130, "skill written"],
  [175, "orientation adopted"],
]);
const FOLDS = new Set([80, 150]);

const contract = Array.from({ length: 120 }, (_, i) => `Rule ${i + 1}: the agent keeps its work durable, small and reviewed; step ${i + 1} of the contract.\n`).join("");
function sourcesAt(step: number): SourceInput[] {
  const changes = [...CHANGES.keys()].filter((s) => s <= step).length;
  const skills = `Skills: deploy, review${changes >= 1 ? ", release" : ""}${changes >= 4 ? ", rollback" : ""}.\n`;
  const edited = changes >= 3 ? contract.replace("Rule 7:", "Rule 7 (edited):") : contract;
  const out: SourceInput[] = [{ name: "contract", text: edited }];
  if (changes >= 2) out.push({ name: "style", text: changes >= 5 ? "Style: terse, cite evidence, name files.\n" : "Style: terse.\n" });
  out.push({ name: "skills", text: skills });
  return out;
}

interface RunResult {
  prompt: number;
  cached: number;
  bodies: string[];
  messages: string[];
  foldBefore: boolean[];
}

async function runSession(baseline: boolean): Promise<RunResult> {
  const server = await startScriptedServer();
  const route: Route = parseRoute({ name: "bench", api: "chat", base_url: `${server.url}/v1`, model: "bench-1", api_key_env: null, context_tokens: 1_000_000 });
  for (let i = 0; i < STEPS; i++) server.push({ text: `Step ${i}: looking at the next file.`, calls: [{ code: `result_${i} = inspect("src/file_${i}.py")\nresult_${i}` }] });
  let chain: HeaderRecord[] = [pinAtStart(sourcesAt(0), T0)];
  let pinText = (chain[0] as { text: string }).text;
  let frontier: FrontierRef | null = null;
  const records: TranscriptRecord[] = [];
  let seq = 0;
  let assembler = new RequestAssembler(route, pinText, null);
  let pendingCall: { id: string; request: string } | null = null;
  const out: RunResult = { prompt: 0, cached: 0, bodies: [], messages: [], foldBefore: [] };
  for (let step = 0; step < STEPS; step++) {
    const t = T0 + step * 30_000;
    let folded = false;
    if (pendingCall) {
      records.push({
        seq: ++seq,
        kind: "cell",
        request_id: pendingCall.request,
        call_id: pendingCall.id,
        result: { execution_id: `ex-${step}`, status: "ok", output: [{ stream: "stdout", text: `checked src/file_${step - 1}.py: ${"ok ".repeat(40)}\n` }, { stream: "result", text: `{'lines': ${100 + step}, 'issues': ${step % 3}}` }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: t - 900, ended_at_ms: t - 480 },
      });
    }
    if (step % 10 === 0) records.push({ seq: ++seq, kind: "input", event: { source: "operator", received_at_ms: t, payload: { text: `Operator note ${step}: keep going, and report anything odd in the next batch.` } } });
    if (CHANGES.has(step)) {
      const revision = observe(chain, sourcesAt(step), { origin: "host", reason: CHANGES.get(step)! }, t) as HeaderRevision;
      chain = [...chain, revision];
      records.push({ seq: ++seq, kind: "observation", revision });
    }
    if (FOLDS.has(step)) {
      // Cover all but the last few records, cutting before an input or a reply (never between a call and its result).
      let cut = records.length - 6;
      while (cut > 0 && (records[cut]!.kind === "cell" || records[cut]!.kind === "refusal")) cut--;
      const through = records[cut - 1]!.seq;
      const covered = records.filter((r) => r.seq <= through && r.kind === "observation").map((r) => (r as { revision: HeaderRevision }).revision.digest);
      const pin = fold(chain, sourcesAt(step), t, covered);
      chain = [...chain, pin];
      pinText = pin.text;
      frontier = { frontier_id: `fr-${step}`, covers_through: through, block: composeFrontierBlock([{ title: "pending inputs", lines: [] }, { title: "open waits", lines: [] }, { title: "last cell", lines: [`checked ${step}`] }]), created_at_ms: t };
      assembler = new RequestAssembler(route, pinText, frontier);
      folded = true;
    }
    const visible = records.filter((r) => r.seq > (frontier?.covers_through ?? 0));
    let body: { text: string; object: Record<string, unknown> };
    if (baseline) {
      // What most frameworks do: the system prompt is rebuilt from the current sources every step.
      const object = buildRequestBody(route, assembleMessages({ header: joinSources(sourcesAt(step)), frontier, records: visible.filter((r) => r.kind !== "observation") }));
      body = { text: serializeBody(object), object };
    } else {
      assembler.append(visible.filter((r) => r.seq > assembler.through));
      body = assembler.body();
    }
    const result = await callRoute(route, body.object, { key: null });
    if (bodyDigest(result.sent!) !== bodyDigest(body.text)) throw new Error("the client sent other bytes than assembled");
    out.prompt += result.usage!.prompt_tokens!;
    out.cached += result.usage!.cached_prompt_tokens!;
    out.bodies.push(body.text);
    out.messages.push(serializeMessages(bodyMessages(body.object)));
    out.foldBefore.push(folded);
    const requestId = `mr-${step}`;
    records.push({ seq: ++seq, kind: "reply", request_id: requestId, reply: result.reply });
    pendingCall = { id: result.reply.calls[0]!.id, request: requestId };
  }
  await server.close();
  return out;
}

function prefixFigures(run: RunResult) {
  let strict = 0;
  let transitions = 0;
  let shareSum = 0;
  for (let i = 0; i + 1 < run.bodies.length; i++) {
    if (run.foldBefore[i + 1]) continue;
    transitions++;
    if (run.messages[i + 1]!.startsWith(run.messages[i]!)) strict++;
    shareSum += sharedPrefixBytes(run.bodies[i]!, run.bodies[i + 1]!) / Buffer.byteLength(run.bodies[i]!);
  }
  return { strict, transitions, meanShare: shareSum / transitions, cacheShare: run.cached / run.prompt };
}

const pct = (x: number) => `${(100 * x).toFixed(2)}%`;

async function prefixBench() {
  const ours = await runSession(false);
  const base = await runSession(true);
  const a = prefixFigures(ours);
  const b = prefixFigures(base);
  console.log(`## prefix stability: ${STEPS} steps, ${CHANGES.size} instruction changes (${[...new Set(CHANGES.values())].join(", ")}), ${FOLDS.size} folds`);
  console.log(`ours:     ${a.strict}/${a.transitions} requests with no fold before the next are strict prefix extensions of it; mean body share kept by the next request ${pct(a.meanShare)}; cache share reported by the provider ${pct(a.cacheShare)} (${ours.cached}/${ours.prompt} tokens)`);
  console.log(`baseline: ${b.strict}/${b.transitions} strict prefix extensions; mean body share ${pct(b.meanShare)}; cache share ${pct(b.cacheShare)} (${base.cached}/${base.prompt} tokens)`);
  console.log(`uncached input tokens: ours ${ours.prompt - ours.cached}, baseline ${base.prompt - base.cached} (baseline / ours = ${((base.prompt - base.cached) / (ours.prompt - ours.cached)).toFixed(2)}x)`);
}

function transcript(n: number): TranscriptRecord[] {
  const out: TranscriptRecord[] = [];
  for (let seq = 1; out.length < n; ) {
    out.push({ seq: seq++, kind: "reply", request_id: `r${seq}`, reply: { text: `Looking at file ${seq}.`, calls: [{ id: `c${seq}`, name: "python", arguments: JSON.stringify({ code: `inspect("src/file_${seq}.py")` }) }], stop: "tool_calls" } });
    out.push({ seq: seq++, kind: "cell", request_id: `r${seq - 1}`, call_id: `c${seq - 1}`, result: { execution_id: `e${seq}`, status: "ok", output: [{ stream: "stdout", text: `checked: ${"ok ".repeat(40)}\n` }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T0, ended_at_ms: T0 + 420 } });
  }
  return out;
}

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function assemblyBench() {
  const route = parseRoute({ name: "bench", api: "chat", base_url: "http://127.0.0.1:1/v1", model: "bench-1", api_key_env: null, context_tokens: 1_000_000 });
  const header = joinSources(sourcesAt(0));
  const samples = 301;
  const figures: Record<number, { step: number; full: number; digest: number; bytes: number }> = {};
  for (const n of [100, 1000]) {
    const all = transcript(n + 2);
    const before = all.slice(0, n);
    const fresh = all.slice(n);
    const step: number[] = [];
    const full: number[] = [];
    const digest: number[] = [];
    let bytes = 0;
    for (let i = 0; i < samples; i++) {
      const assembler = new RequestAssembler(route, header, null);
      assembler.append(before);
      assembler.body();
      const t0 = performance.now();
      assembler.append(fresh);
      const body = assembler.body();
      const t1 = performance.now();
      bytes = Buffer.byteLength(body.text);
      bodyDigest(body.text);
      const t2 = performance.now();
      serializeBody(buildRequestBody(route, assembleMessages({ header, frontier: null, records: all })));
      const t3 = performance.now();
      step.push(t1 - t0);
      digest.push(t2 - t1);
      full.push(t3 - t2);
    }
    figures[n] = { step: p50(step), full: p50(full), digest: p50(digest), bytes };
  }
  const [a, b] = [figures[100]!, figures[1000]!];
  console.log(`## assembly cost of step N (append the new reply and result, produce the body): p50 of ${samples}`);
  console.log(`100 records:   ${(a.step * 1000).toFixed(1)} µs (body ${a.bytes} B); sha256 of the body ${(a.digest * 1000).toFixed(1)} µs; pure full re-assembly ${(a.full * 1000).toFixed(1)} µs`);
  console.log(`1,000 records: ${(b.step * 1000).toFixed(1)} µs (body ${b.bytes} B); sha256 of the body ${(b.digest * 1000).toFixed(1)} µs; pure full re-assembly ${(b.full * 1000).toFixed(1)} µs`);
  console.log(`ratio 1,000 / 100: incremental ${(b.step / a.step).toFixed(2)}x (target <= 2x, and <= 1 ms: ${b.step <= 1 ? "yes" : "no"}); full re-assembly ${(b.full / a.full).toFixed(2)}x`);
}

await prefixBench();
assemblyBench();
