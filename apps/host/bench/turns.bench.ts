// pnpm bench (apps/host), model turns: host overhead per model step of a driven session against
// the scripted server. A step runs from one request's row being written to the next one's: the
// reply recorded, parsed into a cell, the cell record written, the cell executed, its result
// announced, inputs and observations transcribed, the next request assembled, digested and its
// row written. The route call and the whole `execute` of the cell (worker round trip included) are
// measured separately and excluded, so what is left is the driver's own work.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedServer } from "../../../test-support/scripted-server.ts";
import { Host } from "../src/runtime/host";

const STEPS = 150;
const server = await startScriptedServer();
const dataDir = mkdtempSync("/tmp/klbr-tb-");
const workspace = mkdtempSync("/tmp/klbr-tbw-");
writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "bench", routes: [{ name: "bench", api: "chat", base_url: `${server.url}/v1`, model: "bench-1", api_key_env: null, context_tokens: 10_000_000 }] }));
for (let i = 0; i < STEPS; i++) server.push({ text: `step ${i}`, calls: [{ code: `x_${i} = ${i}` }] });
server.push({ text: "done" });

const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), drive: { maxCellsPerTurn: 10_000 } });
const requests: number[] = [];
const route: number[] = [];
const cell: number[] = [];
host.subscribe((n) => {
  if (n.type !== "model") return;
  if (n.phase === "request") requests.push(performance.now());
  if (n.phase === "reply") route.push(n.route_ms as number);
  if (n.phase === "result") cell.push(n.cell_ms as number);
});
await host.postInput("run the benchmark steps");
await host.turns!.idle();
await host.stop();
await server.close();
rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });

const overhead: number[] = [];
for (let i = 10; i + 1 < requests.length && i < cell.length; i++) overhead.push(requests[i + 1]! - requests[i]! - route[i]! - cell[i]!);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[], q: number) => sorted(xs)[Math.floor(q * (xs.length - 1))]!;
console.log(`## model turns: host overhead per step (${overhead.length} steps after 10 warm-up; route call and cell execute excluded)`);
console.log(`host overhead p50 ${p(overhead, 0.5).toFixed(3)} ms  p90 ${p(overhead, 0.9).toFixed(3)} ms  (target p50 <= 2 ms)`);
console.log(`for scale: route call p50 ${p(route.slice(10), 0.5).toFixed(3)} ms (loopback scripted server), cell execute p50 ${p(cell.slice(10), 0.5).toFixed(3)} ms (worker round trip included)`);
