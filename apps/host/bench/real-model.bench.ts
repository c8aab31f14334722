// pnpm bench (apps/host), a real model (issue 27): host overhead per model step of a driven
// session against llama.cpp's server (SmolLM2-135M-Instruct, tool cells, temperature 0), and its
// share of a step's wall time. A step runs from one request's row being written to the next
// one's. Two figures, because the host works in two places:
// - host overhead: the step's wall time less the route call and the cell execute (the reply
//   recorded, parsed into cells, cell records or refusals written, results announced, the next
//   request assembled, digested and its row written): what each step waits on the host;
// - host CPU: the host process's CPU time over the whole step, which adds its work *inside* the
//   calls: the request serialized and sent, the streamed reply read and parsed chunk by chunk
//   (llama.cpp's server streams one token per event), the cell dispatched and its frames read.
//   Waiting on the server's generation or on the worker costs none.
// A recording proxy adds tool_choice to every request so each step has a call (a 135M model's
// arguments are often not JSON: then the step is a refusal, which the figures count too); it runs
// in a process of its own so its work is not counted as the host's. Needs `.ci/setup-llama.sh`
// (prints why and exits 0 when the server is missing). KLBR_BENCH_REAL_STEPS sets the steps (25).
// The turn is ended by the bench after its steps (the operator's stop): a refused call (the 135M
// model's arguments cut at max_tokens are often not JSON) is no cell, so max_cells_per_turn never
// ends a turn of refusals, and such a turn ran on until its context filled (issue 43: a run
// printed nothing in 9.5 minutes at load 12-20, where a step takes 10-20 s).
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Host } from "../src/runtime/host";
import { findLlama, MODEL_ALIAS, startLlamaServer } from "../test/real-model/llama-server";
import { percentile, watchSteps, type StepWork } from "./figures";

const STEPS = Number(process.env.KLBR_BENCH_REAL_STEPS ?? 25);
const WARMUP = 5;
// Measured steps run from one request to the next: one request more than the steps, all forced.
const REQUESTS = WARMUP + STEPS + 1;
const install = findLlama();
if (install === null) {
  console.log("## real model: skipped (llama.cpp's server is not installed; run .ci/setup-llama.sh)");
  process.exit(0);
}
const server = await startLlamaServer(install, { chatFormat: "chatml-function-calling", nCtx: 32_768, seed: 1234 });
// The proxy's process dies with the bench: it stops when its stdin (our pipe) closes.
const proxy = spawn(process.execPath, [...process.execArgv, fileURLToPath(new URL("./real-model-proxy.ts", import.meta.url)), server.baseUrl.replace(/\/v1$/, ""), String(REQUESTS)], { stdio: ["pipe", "pipe", "inherit"] });
const [proxyUrl] = (await once(createInterface({ input: proxy.stdout! }), "line")) as [string];
const dataDir = mkdtempSync("/tmp/klbr-rb-");
const workspace = mkdtempSync("/tmp/klbr-rbw-");
writeFileSync(
  join(dataDir, "routes.json"),
  JSON.stringify({
    default: "local",
    routes: [{ name: "local", api: "chat", base_url: proxyUrl, model: MODEL_ALIAS, api_key_env: null, context_tokens: 24_000, cells: "tool", options: { temperature: 0, seed: 1234, max_tokens: 64 } }],
  }),
);

const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), drive: { maxCellsPerTurn: STEPS } });
// The host's CPU when no turn runs (workers' heartbeats, timers): a long route call accrues it too.
const idleFrom = process.cpuUsage();
await new Promise((resolve) => setTimeout(resolve, 3000));
const idle = process.cpuUsage(idleFrom);
const idleMsPerS = (idle.user + idle.system) / 1000 / 3;
const steps = watchSteps(host);
// The last request's reply ends the turn: its calls are refused, no further request is sent.
let requests = 0;
host.subscribe((n) => {
  if (n.type === "model" && n.phase === "request" && ++requests === REQUESTS) host.turns!.stopTurn(n.session_id as string);
});
// The streamed pieces of each reply (text and argument deltas), for scale.
const deltas: number[] = [];
host.subscribe((n) => {
  if (n.type === "model" && n.phase === "request") deltas.push(0);
  if (n.type === "model" && n.phase === "delta") deltas[deltas.length - 1]! += 1;
});
await host.postInput("Use the python tool to count from 1 upwards, one number per cell.");
await host.turns!.idle();
await host.stop();
proxy.stdin!.end();
await once(proxy, "exit");
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });

const work = steps.work(WARMUP);
const p = (pick: (s: StepWork) => number, q: number) => percentile(work.map(pick), q);
const f = (pick: (s: StepWork) => number) => `p50 ${p(pick, 50).toFixed(3)} ms  p90 ${p(pick, 90).toFixed(3)} ms`;
const total = (pick: (s: StepWork) => number) => work.reduce((a, s) => a + pick(s), 0);
const share = (pick: (s: StepWork) => number) => `p50 ${(100 * percentile(work.map((s) => pick(s) / s.wall), 50)).toFixed(3)}%, all steps ${((100 * total(pick)) / total((s) => s.wall)).toFixed(3)}%`;
console.log(`## real model (llama-cpp-python ${install.version}, SmolLM2-135M-Instruct Q4_1, tool cells): host overhead per step (${work.length} steps after ${WARMUP} warm-up, ${work.filter((s) => s.cell > 0).length} with a cell run; streamed pieces per reply p50 ${percentile(deltas.slice(WARMUP), 50)})`);
console.log(`host overhead p50 ${p((s) => s.outside, 50).toFixed(3)} ms  p90 ${p((s) => s.outside, 90).toFixed(3)} ms  (target p50 <= 1 ms (issue 43): ${p((s) => s.outside, 50) <= 1 ? "met" : "not met"}; wall time outside the route call and the cell execute: what a step waits on the host)`);
console.log(`host CPU per step ${f((s) => s.cpu)}  (every thread of the host process, the whole step: inside the route call ${f((s) => s.cpuRoute)}, inside cells ${f((s) => s.cpuCell)})`);
console.log(`  of which the idle host's own (${idleMsPerS.toFixed(3)} ms CPU per second with no turn running): ${((idleMsPerS * p((s) => s.route, 50)) / 1000).toFixed(3)} ms over a route call p50`);
console.log(`share of a step's wall time: host overhead ${share((s) => s.outside)}; host CPU ${share((s) => s.cpu)}  (step wall p50 ${p((s) => s.wall, 50).toFixed(1)} ms: route call p50 ${p((s) => s.route, 50).toFixed(1)} ms, cells p50 ${p((s) => s.cell, 50).toFixed(1)} ms)`);
