// pnpm bench (apps/host): a new session's first `1+1` (issue 23, C19), through the control socket
// of one `klbr serve`: on a warm spare (`--spare 1`, the default), on a cold start (`--spare 0`),
// and, in the same run, Jupyter's cold kernel start to its first `1+1` (jupyter_client + ipykernel,
// from KLBR_BENCH_JUPYTER_PYTHON or ~/.cache/klbr-jupyter/bin/python when present; otherwise the
// comparison is against our own cold start only). Prints p50/p99 and the ratios, and what each
// live workbench of the warm run costs with its guard (RSS and PSS, the spare left out). Asserts nothing.
//
// KLBR_BENCH_STARTS=15 (new sessions per mode). KLBR_BENCH_BASE_BIN=<another build's bin/klbr.js>
// (e.g. main's) and/or KLBR_BENCH_BASE_ENV=NAME=VALUE,... (e.g. KLBR_BYTECODE_CACHE=off, what the
// base daemon gets besides this environment): instead, this build against that base, both warm
// (then both cold), one daemon each, their first cells alternated in one run, with the ratio, and
// the CPU time the two daemons' trees used in each mode; no Jupyter.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlClient } from "../src/control/client";
import { BIN, startDaemon } from "./daemon";
import { percentile } from "./figures";
import { pss, rss, tree, workbenches } from "./procs";

const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
const STARTS = Number(process.env.KLBR_BENCH_STARTS ?? 15);
const BASE_ENV = Object.fromEntries(
  (process.env.KLBR_BENCH_BASE_ENV ?? "").split(",").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const BASE_BIN = process.env.KLBR_BENCH_BASE_BIN ?? (Object.keys(BASE_ENV).length > 0 ? BIN : undefined);
const JUPYTER = process.env.KLBR_BENCH_JUPYTER_PYTHON ?? join(homedir(), ".cache", "klbr-jupyter", "bin", "python");

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** CPU ticks of a process tree so far: each live process's own and its reaped children's (a worker that exited still counts in its guard's, the guard's in the daemon's). */
function treeTicks(pid: number): number {
  let total = 0;
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      continue; // gone
    }
    stack.push(...childrenOf(p));
  }
  return total;
}

/** CPU ticks of a process and its children so far (0 once gone). */
function cpuTicks(pid: number): number {
  let total = 0;
  for (const p of [pid, ...childrenOf(pid)]) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += Number(f[11]) + Number(f[12]);
    } catch {
      // gone
    }
  }
  return total;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Wait until a spare is up and done starting: its tree used no CPU over 3 looks 100 ms apart. */
async function warmSpare(client: ControlClient): Promise<void> {
  for (;;) {
    const pool = ((await client.request({ op: "status" })) as { workbench_pool: { spare: { pids: number[] } } }).workbench_pool;
    const pid = pool.spare.pids[0];
    if (pid === undefined) {
      await sleep(50);
      continue;
    }
    let last = -1;
    let still = 0;
    while (still < 3) {
      await sleep(100);
      const now = cpuTicks(pid);
      still = now === last ? still + 1 : 0;
      last = now;
    }
    return;
  }
}

/** One live workbench's worker + guard, in MiB. */
interface WorkbenchMemory {
  rss: number;
  pss: number;
}

/** What each live session's workbench costs with its guard (the spares left out): issue 23's <= 30 MiB RSS. */
function liveWorkbenches(daemon: number, spares: number[]): WorkbenchMemory[] {
  const mib = (bytes: number) => bytes / 1024 / 1024;
  return workbenches(tree(daemon))
    .filter((b) => !spares.includes(b.worker) && !spares.includes(b.guard))
    .map((b) => ({ rss: mib(rss(b.worker) + rss(b.guard)), pss: mib(pss(b.worker) + pss(b.guard)) }));
}

let memory: WorkbenchMemory[] = [];

async function firstCells(spare: boolean): Promise<number[]> {
  const dataDir = mkdtempSync("/tmp/klbr-sp-");
  const workspace = mkdtempSync("/tmp/klbr-spw-");
  const daemon = await startDaemon(dataDir, ["-w", workspace, "--spare", spare ? "1" : "0"]);
  const client = await ControlClient.connect(join(dataDir, "klbr.sock"));
  const samples: number[] = [];
  try {
    for (let i = 0; i < STARTS; i++) {
      if (spare) await warmSpare(client);
      else await sleep(300);
      const t = process.hrtime.bigint();
      const report = (await client.request({ op: "exec", code: "1+1", session: `first-${i}` })) as { status: string; output: Array<{ text: string }> };
      samples.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (report.status !== "ok" || report.output[0]?.text !== "2") throw new Error(`first cell: ${JSON.stringify(report)}`);
    }
    if (spare) {
      // The last take's replacement is started and ready first: it is left out by its pid.
      await warmSpare(client);
      const pool = ((await client.request({ op: "status" })) as { workbench_pool: { spare: { pids: number[] } } }).workbench_pool;
      memory = liveWorkbenches(daemon.pid!, pool.spare.pids);
    }
  } finally {
    client.close();
    daemon.kill("SIGTERM");
    await new Promise((r) => daemon.once("exit", r));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
  return samples;
}

/** One daemon of `bin` (`--spare 1` or 0) and the first cells of its new sessions. */
async function openTarget(bin: string, spare: boolean, env: NodeJS.ProcessEnv = process.env) {
  const dataDir = mkdtempSync("/tmp/klbr-sp-");
  const workspace = mkdtempSync("/tmp/klbr-spw-");
  const daemon = await startDaemon(dataDir, ["-w", workspace, "--spare", spare ? "1" : "0"], bin, env);
  let cpu = 0;
  const client = await ControlClient.connect(join(dataDir, "klbr.sock"));
  let i = 0;
  return {
    async first(): Promise<number> {
      if (spare) await warmSpare(client);
      else await sleep(300);
      const ticks = treeTicks(daemon.pid!);
      const t = process.hrtime.bigint();
      const report = (await client.request({ op: "exec", code: "1+1", session: `first-${i++}` })) as { status: string; output: Array<{ text: string }> };
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      cpu += treeTicks(daemon.pid!) - ticks;
      if (report.status !== "ok" || report.output[0]?.text !== "2") throw new Error(`first cell: ${JSON.stringify(report)}`);
      return ms;
    },
    /** CPU ticks the daemon's tree used over the first cells (its live processes; the spare refills after a cell are partly left out). */
    get cpuTicks() {
      return cpu;
    },
    async close(): Promise<void> {
      client.close();
      daemon.kill("SIGTERM");
      await new Promise((r) => daemon.once("exit", r));
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** This build against `base`, the first cells alternated (the load of the machine hits both alike). */
async function against(base: string, spare: boolean): Promise<void> {
  const ours = await openTarget(BIN, spare);
  const theirs = await openTarget(base, spare, { ...process.env, ...BASE_ENV });
  const a: number[] = [];
  const b: number[] = [];
  try {
    for (let i = 0; i < STARTS; i++) {
      if (i % 2 === 0) {
        a.push(await ours.first());
        b.push(await theirs.first());
      } else {
        b.push(await theirs.first());
        a.push(await ours.first());
      }
    }
  } finally {
    await ours.close();
    await theirs.close();
  }
  const tick = 1000 / 100; // ms per clock tick (USER_HZ)
  const mode = spare ? "warm spare" : "cold start";
  console.log(line(`first 1+1, ${mode}, this build`, a));
  console.log(line(`first 1+1, ${mode}, base build`, b));
  console.log(`${mode}: this build's p50 is ${(percentile(a, 50) / percentile(b, 50)).toFixed(2)}x the base's (p99 ${(percentile(a, 99) / percentile(b, 99)).toFixed(2)}x)`);
  console.log(
    `${mode}: CPU of the daemon's tree per first cell: this build ${((ours.cpuTicks * tick) / STARTS).toFixed(0)} ms, base ${((theirs.cpuTicks * tick) / STARTS).toFixed(0)} ms (${(ours.cpuTicks / Math.max(1, theirs.cpuTicks)).toFixed(2)}x)`,
  );
}

/** Jupyter's cold kernel start to its first `1+1`, STARTS times, in ms (null when not installed). */
function jupyterStarts(): number[] | null {
  if (!existsSync(JUPYTER)) return null;
  const script = `
import json, sys, time
from jupyter_client.manager import KernelManager
out = []
for _ in range(${STARTS}):
    t = time.perf_counter()
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=120)
    reply = kc.execute_interactive("1+1", timeout=120, output_hook=lambda m: None)
    assert reply["content"]["status"] == "ok", reply
    out.append((time.perf_counter() - t) * 1000)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    time.sleep(0.3)
print(json.dumps(out))
`;
  return JSON.parse(execFileSync(JUPYTER, ["-c", script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 })) as number[];
}

const line = (label: string, s: number[]) => `${label.padEnd(40)} p50 ${percentile(s, 50).toFixed(1)} ms  p99 ${percentile(s, 99).toFixed(1)} ms  (n=${s.length})`;

if (!existsSync(join(HOST_DIR, "dist", "cli.js"))) {
  console.log("spare bench: skipped, run `pnpm build` first (the bin runs dist/)");
} else if (BASE_BIN) {
  console.log(`base: ${BASE_BIN}${Object.keys(BASE_ENV).length > 0 ? ` with ${JSON.stringify(BASE_ENV)}` : ""}`);
  await against(BASE_BIN, true);
  await against(BASE_BIN, false);
} else {
  const warm = await firstCells(true);
  console.log(line("first 1+1, warm spare (--spare 1)", warm));
  const median = (values: number[]) => percentile(values, 50).toFixed(1);
  console.log(
    `each live workbench (worker + guard, after its first cell, n=${memory.length}): RSS p50 ${median(memory.map((m) => m.rss))} MiB, PSS p50 ${median(memory.map((m) => m.pss))} MiB`,
  );
  const cold = await firstCells(false);
  console.log(line("first 1+1, cold start (--spare 0)", cold));
  const jupyter = jupyterStarts();
  if (jupyter) console.log(line("Jupyter cold kernel start + 1+1", jupyter));
  else console.log(`Jupyter: not installed at ${JUPYTER} (set KLBR_BENCH_JUPYTER_PYTHON); compared against our cold start only`);
  const base = jupyter ?? cold;
  console.log(`warm spare p50 is ${(percentile(base, 50) / percentile(warm, 50)).toFixed(1)}x faster than ${jupyter ? "Jupyter's cold kernel start" : "our cold start"}; cold start ${(percentile(base, 50) / percentile(cold, 50)).toFixed(1)}x`);
}

