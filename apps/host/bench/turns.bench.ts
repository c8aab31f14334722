// pnpm bench (apps/host), model turns: host overhead per model step of a driven session against
// the scripted server. A step runs from one request's row being written to the next one's: the
// reply recorded, parsed into a cell, the cell record written, the cell executed, its result
// announced, inputs and observations transcribed, the next request assembled, digested and its
// row written. The route call and the whole `execute` of the cell (worker round trip included) are
// measured separately and excluded, so what is left is the driver's own work. The host CPU line
// adds what the host does inside those calls (serializing the request, parsing the streamed reply,
// dispatching the cell and reading its frames), as process CPU time, which waiting does not cost.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedServer } from "../../../test-support/scripted-server.ts";
import { Host } from "../src/runtime/host";
import { percentile, watchSteps } from "./figures";

const STEPS = 150;
const server = await startScriptedServer();
const dataDir = mkdtempSync("/tmp/klbr-tb-");
const workspace = mkdtempSync("/tmp/klbr-tbw-");
writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "bench", routes: [{ name: "bench", api: "chat", base_url: `${server.url}/v1`, model: "bench-1", api_key_env: null, context_tokens: 10_000_000 }] }));
for (let i = 0; i < STEPS; i++) server.push({ text: `step ${i}`, calls: [{ code: `x_${i} = ${i}` }] });
server.push({ text: "done" });

const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), drive: { maxCellsPerTurn: 10_000 } });
const steps = watchSteps(host);
await host.postInput("run the benchmark steps");
await host.turns!.idle();
await host.stop();
await server.close();
rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });

const overhead = steps.overhead(10);
console.log(`## model turns: host overhead per step (${overhead.length} steps after 10 warm-up; route call and cell execute excluded)`);
console.log(`host overhead p50 ${percentile(overhead, 50).toFixed(3)} ms  p90 ${percentile(overhead, 90).toFixed(3)} ms  (target p50 <= 2 ms)`);
const work = steps.work(10);
const cpu = (pick: (w: (typeof work)[number]) => number) => `p50 ${percentile(work.map(pick), 50).toFixed(3)} ms  p90 ${percentile(work.map(pick), 90).toFixed(3)} ms`;
console.log(`host CPU per step ${cpu((w) => w.cpu)}  (every thread of the host process, the whole step: inside the route call ${cpu((w) => w.cpuRoute)}, inside the cell ${cpu((w) => w.cpuCell)})`);
console.log(`for scale: route call p50 ${percentile(steps.route.slice(10), 50).toFixed(3)} ms (loopback scripted server), cell execute p50 ${percentile(steps.cell.slice(10), 50).toFixed(3)} ms (worker round trip included)`);
