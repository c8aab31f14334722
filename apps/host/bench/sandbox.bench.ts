// pnpm bench (apps/host), the sandbox part: cold start to ready and the `1+1` round trip of a
// workbench under the host's bwrap policy against the same workbench unsandboxed, measured
// interleaved in this one run (one of each per round), so machine drift weighs on both alike.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { resolvePython, startWorker, type Worker, type WorkerSandbox } from "@klbr/supervisor";
import { defaultPythonDir } from "../src/paths";
import { Host } from "../src/runtime/host";
import { HostSandbox } from "../src/sandbox/host-sandbox";
import { ms, percentile as pct, ratioLine } from "./figures";

const pythonDir = defaultPythonDir();
const python = resolvePython();
const dataDir = mkdtempSync("/tmp/klbr-sb-");
const workspace = mkdtempSync("/tmp/klbr-sbw-");
const sandbox = new HostSandbox({ mode: "bwrap", network: false, bwrap: process.env.KLBR_BWRAP || "bwrap" }, {
  workspace,
  dataDir,
  controlSocket: join(dataDir, "klbr.sock"),
  pythonDir,
  python,
});
await sandbox.check();
let gen = 0;

function start(box: WorkerSandbox | undefined): Promise<Worker> {
  return startWorker({
    role: "workbench",
    sessionId: "bench",
    generation: `g-${++gen}`,
    command: [python, "-m", "klbr.worker"],
    pythonPath: [pythonDir],
    cwd: workspace,
    ...(box ? { sandbox: box } : {}),
  });
}

const line = (name: string, value: number, base: number, target?: string) => ratioLine(name, value, base, { baseline: "unsandboxed", width: 40, target });

// Cold start: spawn to a ready worker (hello checked), then shut down; one of each per round.
const cold = { plain: [] as number[], boxed: [] as number[] };
for (let i = 0; i < 12; i++) {
  for (const [kind, box] of [["plain", undefined], ["boxed", sandbox.worker()]] as const) {
    const t = performance.now();
    const w = await start(box);
    cold[kind].push(performance.now() - t);
    await w.shutdown();
  }
}
const c = { plain: pct(cold.plain, 50), boxed: pct(cold.boxed, 50) };
line("cold start to ready p50 (bwrap)", c.boxed, c.plain);
console.log(`${"  bwrap's cold-start cost".padEnd(40)} +${ms(c.boxed - c.plain)}`);

// Round trip: execute("1+1") on two live workers, interleaved.
const plain = await start(undefined);
const boxed = await start(sandbox.worker());
async function once(w: Worker): Promise<number> {
  const t = performance.now();
  const done = await w.execute("1+1");
  if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
  return performance.now() - t;
}
for (let i = 0; i < 500; i++) {
  await once(plain);
  await once(boxed);
}
const rt = { plain: [] as number[], boxed: [] as number[] };
for (let i = 0; i < 3000; i++) {
  rt.plain.push(await once(plain));
  rt.boxed.push(await once(boxed));
}
await Promise.all([plain.shutdown(), boxed.shutdown()]);
line("execute 1+1 round trip p50 (bwrap)", pct(rt.boxed, 50), pct(rt.plain, 50), "<= x1.10");
line("execute 1+1 round trip p99 (bwrap)", pct(rt.boxed, 99), pct(rt.plain, 99));

// A whole host (sandbox check, hooks worker, root workbench) to ready, and stopped.
const hostStart = { plain: [] as number[], boxed: [] as number[] };
for (let i = 0; i < 3; i++) {
  for (const mode of ["none", "bwrap"] as const) {
    const dir = mkdtempSync("/tmp/klbr-sbh-");
    const t = performance.now();
    const host = await Host.start({ dataDir: dir, workspace, sandbox: mode, network: mode === "none" });
    (mode === "none" ? hostStart.plain : hostStart.boxed).push(performance.now() - t);
    await host.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
line("Host.start to ready p50 (bwrap)", pct(hostStart.boxed, 50), pct(hostStart.plain, 50));

rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });
