// pnpm bench (apps/host), telemetry (C18): what exporting traces to a live Jaeger costs the host.
// Two figures, each measured with export off and with export on (OTLP/HTTP to a Jaeger started
// here), in alternating rounds of the same run so the machine's drift hits both alike:
//   1. `1+1` through the host (host.execute, worker round trip included);
//   2. host overhead per model step of a driven session against the scripted server (as in
//      turns.bench.ts: the route call and the cell's execute excluded, so what is left is the
//      host's own work, which is where span building would show).
// Target: export on within 5% of export off.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startJaeger } from "../../../test-support/jaeger.ts";
import { startScriptedServer } from "../../../test-support/scripted-server.ts";
import { Host } from "../src/runtime/host";
import { percentile, watchSteps } from "./figures";

const ROUNDS = 3;
const EXECS = 100;
const STEPS = 80;
const WARMUP = 10;

const jaeger = await startJaeger();
const on = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttp };


async function withHost<T>(env: Record<string, string> | null, drive: boolean, body: (host: Host, server: Awaited<ReturnType<typeof startScriptedServer>> | null) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync("/tmp/klbr-tel-");
  const workspace = mkdtempSync("/tmp/klbr-telw-");
  const server = drive ? await startScriptedServer() : null;
  if (server) writeFileSync(join(dataDir, "routes.json"), JSON.stringify({ default: "bench", routes: [{ name: "bench", api: "chat", base_url: `${server.url}/v1`, model: "bench-1", api_key_env: null, context_tokens: 10_000_000 }] }));
  const host = await Host.start({
    dataDir,
    workspace,
    builtinSkillsDir: join(workspace, "skills"),
    telemetry: env ? { env } : false,
    ...(drive ? { drive: { maxCellsPerTurn: 10_000 } } : {}),
  });
  try {
    return await body(host, server);
  } finally {
    await host.stop();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** p50 of `1+1` through the host, in ms. */
async function execs(env: Record<string, string> | null): Promise<number> {
  return withHost(env, false, async (host) => {
    const times: number[] = [];
    for (let i = 0; i < EXECS + WARMUP; i++) {
      const t0 = performance.now();
      const r = await host.execute("1+1");
      if (r.status !== "ok") throw new Error(`1+1: ${r.status}`);
      if (i >= WARMUP) times.push(performance.now() - t0);
    }
    return percentile(times, 50);
  });
}

/** p50 host overhead per model step, in ms (route call and cell execute excluded). */
async function steps(env: Record<string, string> | null): Promise<{ p50: number; spans: number }> {
  return withHost(env, true, async (host, server) => {
    for (let i = 0; i < STEPS; i++) server!.push({ text: `step ${i}`, calls: [{ code: `x_${i} = ${i}` }] });
    server!.push({ text: "done" });
    const steps = watchSteps(host);
    await host.postInput("run the benchmark steps");
    await host.turns!.idle();
    const overhead = steps.overhead(WARMUP);
    const status = (await host.status()) as { telemetry: { exported: number; dropped: number; pending: number } | null };
    return { p50: percentile(overhead, 50), spans: status.telemetry ? status.telemetry.exported + status.telemetry.pending + status.telemetry.dropped : 0 };
  });
}

const results = { execOff: [] as number[], execOn: [] as number[], stepOff: [] as number[], stepOn: [] as number[] };
let spans = 0;
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always runs on the colder machine.
    const order = round % 2 === 0 ? [null, on] : [on, null];
    for (const env of order) {
      const e = await execs(env);
      const s = await steps(env);
      (env ? results.execOn : results.execOff).push(e);
      (env ? results.stepOn : results.stepOff).push(s.p50);
      if (env) spans += s.spans;
    }
  }
  const traced = await jaeger.traces("klbr");
  const median = (xs: number[]) => percentile(xs, 50);
  const ratio = (a: number[], b: number[]) => median(a) / median(b);
  console.log(`## telemetry (C18): export on (OTLP/HTTP to a live Jaeger on loopback) vs off, ${ROUNDS} alternating rounds, medians of each round's p50`);
  console.log(`1+1 through the host:        off ${median(results.execOff).toFixed(3)} ms  on ${median(results.execOn).toFixed(3)} ms  ratio on/off ${ratio(results.execOn, results.execOff).toFixed(3)}  (target <= 1.05)`);
  console.log(`host overhead per model step: off ${median(results.stepOff).toFixed(3)} ms  on ${median(results.stepOn).toFixed(3)} ms  ratio on/off ${ratio(results.stepOn, results.stepOff).toFixed(3)}  (target <= 1.05)`);
  console.log(`spans made with export on: ${spans}; traces Jaeger holds for service klbr: ${traced.length}`);
  console.log(`per round (ms): exec off ${results.execOff.map((x) => x.toFixed(3)).join(" ")} | on ${results.execOn.map((x) => x.toFixed(3)).join(" ")}; step off ${results.stepOff.map((x) => x.toFixed(3)).join(" ")} | on ${results.stepOn.map((x) => x.toFixed(3)).join(" ")}`);
} finally {
  await jaeger.stop();
}
