// pnpm bench (apps/host), a real model (issue 27): host overhead per model step of a driven
// session against llama.cpp's server (SmolLM2-135M-Instruct, tool cells, temperature 0), and its
// share of a step's wall time. A step runs from one request's row being written to the next
// one's; the route call (the server's prompt processing and generation, streamed and parsed as it
// arrives) and the whole `execute` of the cell (worker round trip included) are measured and
// excluded, so what is left is the host's own work: the reply recorded, parsed into a cell, the
// cell dispatched and its record written, its result announced, the next request assembled,
// digested and its row written. A recording proxy adds tool_choice to every request so each step
// has a cell. Needs `.ci/setup-llama.sh` (prints why and exits 0 when the server is missing).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Host } from "../src/runtime/host";
import { findLlama, MODEL_ALIAS, startLlamaServer } from "../test/real-model/llama-server";
import { startRecordingProxy } from "../test/real-model/recording-proxy";

const STEPS = 25;
const WARMUP = 5;
const install = findLlama();
if (install === null) {
  console.log("## real model: skipped (llama.cpp's server is not installed; run .ci/setup-llama.sh)");
  process.exit(0);
}
const server = await startLlamaServer(install, { chatFormat: "chatml-function-calling", nCtx: 32_768, seed: 1234 });
const proxy = await startRecordingProxy(server.baseUrl.replace(/\/v1$/, ""));
proxy.forceToolCalls(STEPS);
const dataDir = mkdtempSync("/tmp/klbr-rb-");
const workspace = mkdtempSync("/tmp/klbr-rbw-");
writeFileSync(
  join(dataDir, "routes.json"),
  JSON.stringify({
    default: "local",
    routes: [{ name: "local", api: "chat", base_url: proxy.baseUrl, model: MODEL_ALIAS, api_key_env: null, context_tokens: 24_000, cells: "tool", options: { temperature: 0, seed: 1234, max_tokens: 64 } }],
  }),
);

const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), drive: { maxCellsPerTurn: STEPS } });
// One step per request: when its row was written, its route call, and the cells of its reply.
const steps: Array<{ at: number; route: number; cells: number }> = [];
host.subscribe((n) => {
  if (n.type !== "model") return;
  if (n.phase === "request") steps.push({ at: performance.now(), route: 0, cells: 0 });
  const step = steps.at(-1);
  if (step && n.phase === "reply") step.route = n.route_ms as number;
  if (step && n.phase === "result") step.cells += n.cell_ms as number;
});
await host.postInput("Use the python tool to count from 1 upwards, one number per cell.");
await host.turns!.idle();
await host.stop();
await proxy.close();
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });

const overhead: number[] = [];
const wall: number[] = [];
for (let i = WARMUP; i + 1 < steps.length; i++) {
  const step = steps[i + 1]!.at - steps[i]!.at;
  wall.push(step);
  overhead.push(step - steps[i]!.route - steps[i]!.cells);
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[], q: number) => (xs.length === 0 ? NaN : sorted(xs)[Math.floor(q * (xs.length - 1))]!);
const share = overhead.map((o, i) => o / wall[i]!);
console.log(`## real model (llama-cpp-python ${install.version}, SmolLM2-135M-Instruct Q4_1, tool cells): host overhead per step (${overhead.length} steps after ${WARMUP} warm-up; route call and cell execute excluded)`);
console.log(`host overhead p50 ${p(overhead, 0.5).toFixed(3)} ms  p90 ${p(overhead, 0.9).toFixed(3)} ms  (target p50 <= 2 ms)`);
console.log(`share of a step's wall time: p50 ${(100 * p(share, 0.5)).toFixed(2)}%  (step wall p50 ${p(wall, 0.5).toFixed(1)} ms: route call p50 ${p(steps.slice(WARMUP).map((s) => s.route), 0.5).toFixed(1)} ms, cells p50 ${p(steps.slice(WARMUP).map((s) => s.cells), 0.5).toFixed(1)} ms)`);
