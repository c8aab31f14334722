// pnpm bench (apps/host): sessions at scale (issue 23, C19). N sessions, each its own control
// connection, run `1+1` in bursts at random intervals against one `klbr serve`; measured with
// idle culling on (`--idle-timeout`) and, in the same run, with culling off as the baseline.
// Reports round-trip p50/p99 (all cells, and apart: cells that found their workbench live, and
// cells that had to start one: a session's first, or the first after a cull), cells/s, errors,
// the daemon's RSS and open fds, the whole tree's RSS (daemon + hooks + workbenches + guards),
// live workbenches and what each costs (worker + its guard, RSS and PSS), and the cull count.
// Two phases per run: the bring-up (every session's first cell, each at a random moment of the
// first gap: 500 starts queue behind the machine's start rate), then KLBR_BENCH_SECONDS of steady
// state, from the moment the last session had its first cell. The round trips are reported for
// each phase apart: the bring-up measures how fast N workbenches start, the steady state what a
// cell costs once N sessions live on the machine, culled and revived as they idle.
// A load test, not a timed test: it asserts nothing. Bounded: the bring-up, KLBR_BENCH_SECONDS of
// steady load, then at most 60 s for the cells in flight.
//
// KLBR_BENCH_SESSIONS=100,500 (the counts), KLBR_BENCH_SECONDS=60 (each run's steady length),
// KLBR_BENCH_RAMP_S (sessions arrive evenly over this many seconds, as sessions come and go on a
// host in use; unset: each at a random moment of the first gap, all together),
// KLBR_BENCH_IDLE=15s (the idle timeout of the culling runs), KLBR_BENCH_GAP_S=10 (mean idle gap),
// KLBR_BENCH_BASELINE=0 (skip the runs without culling), KLBR_BENCH_SPARE (`--spare N`, else the
// default 1), KLBR_PYTHON (the workers' interpreter).
import { fork } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlClient } from "../src/control/client";
import { startDaemon } from "./daemon";
import { percentile } from "./figures";
import type { Sampled } from "./sampler";

const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
const COUNTS = (process.env.KLBR_BENCH_SESSIONS ?? "100,500").split(",").map(Number);
const SECONDS = Number(process.env.KLBR_BENCH_SECONDS ?? 60);
const IDLE = process.env.KLBR_BENCH_IDLE ?? "15s";
const GAP_MS = Number(process.env.KLBR_BENCH_GAP_S ?? 10) * 1000;
const BASELINE = process.env.KLBR_BENCH_BASELINE !== "0";
const SPARE = process.env.KLBR_BENCH_SPARE;
const RAMP_MS = process.env.KLBR_BENCH_RAMP_S === undefined ? undefined : Number(process.env.KLBR_BENCH_RAMP_S) * 1000;
const SAMPLER = fileURLToPath(new URL("./sampler.ts", import.meta.url));
const DRAIN_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Snapshot {
  live: number;
  /** Worker + guard of each live workbench, summed. */
  rss: number;
  pss: number;
}

interface RunResult {
  label: string;
  /** Seconds from the first session's start until every session had its first cell. */
  bringUpSeconds: number;
  /** Each session's first cell (a workbench start each). */
  firsts: number[];
  /** Steady state: every cell sent after the bring-up. */
  all: number[];
  warm: number[];
  starts: number[];
  errors: number;
  errorKinds: Set<string>;
  seconds: number;
  daemonRssMax: number;
  daemonFdsMax: number;
  treeRssMax: number;
  treeRssEnd: number;
  liveMax: number;
  liveEnd: number;
  /** The snapshot with the most live workbenches. */
  peak: Snapshot;
  /** CPU seconds during the steady state: the daemon's own, and the whole tree's (reaped children included). */
  daemonCpu: number;
  treeCpu: number;
  /** Culled during the steady state. */
  culled: number | null;
}

/** A request that gives up after `ms` (a hang is an error here, not a stuck bench). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no reply within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

async function run(n: number, culling: boolean): Promise<RunResult> {
  const dataDir = mkdtempSync("/tmp/klbr-bs-");
  const workspace = mkdtempSync("/tmp/klbr-bsw-");
  const daemon = await startDaemon(dataDir, ["-w", workspace, ...(culling ? ["--idle-timeout", IDLE] : []), ...(SPARE !== undefined ? ["--spare", SPARE] : [])]);
  const socket = join(dataDir, "klbr.sock");
  const clients = await Promise.all(Array.from({ length: n }, () => ControlClient.connect(socket)));
  const r: RunResult = {
    label: `${n} sessions${RAMP_MS !== undefined ? ` arriving over ${RAMP_MS / 1000} s` : ""}, ${culling ? `--idle-timeout ${IDLE}` : "no culling"}${SPARE !== undefined ? `, --spare ${SPARE}` : ""}`,
    bringUpSeconds: 0,
    firsts: [],
    all: [],
    warm: [],
    starts: [],
    errors: 0,
    errorKinds: new Set(),
    seconds: 0,
    daemonRssMax: 0,
    daemonFdsMax: 0,
    treeRssMax: 0,
    treeRssEnd: 0,
    liveMax: 0,
    liveEnd: 0,
    peak: { live: 0, rss: 0, pss: 0 },
    culled: null,
    daemonCpu: 0,
    treeCpu: 0,
  };
  const started = Date.now();
  // Set once the last session has had its first cell: the steady state runs SECONDS from then.
  let steadyFrom = Infinity;
  let until = Infinity;
  let firstsLeft = n;
  let culledAtSteady = 0;
  const culledNow = async () => ((await clients[0]!.request({ op: "status" })) as { workbench_pool?: { culled?: number } }).workbench_pool?.culled ?? 0;
  const firstDone = () => {
    if (--firstsLeft > 0) return;
    steadyFrom = Date.now();
    until = steadyFrom + SECONDS * 1000;
    r.bringUpSeconds = (steadyFrom - started) / 1000;
    void culledNow().then((c) => (culledAtSteady = c));
    sampler.send({ op: "mark" });
  };
  // Sampled from a process of its own, at the lowest priority: /proc reads of a thousand
  // processes in this one would stall the clients' loop and count as round trips.
  const sampler = fork(SAMPLER, [String(daemon.pid), process.env.KLBR_BENCH_SAMPLE_MS ?? "2000"], { execArgv: ["--import", "tsx"] });
  setPriority(sampler.pid!, 19);
  const sampled = new Promise<Sampled>((resolve) => sampler.once("message", (m) => resolve(m as Sampled)));
  // Each session: a first cell at a random moment of the first gap, then bursts of 1-3 cells
  // separated by exponentially distributed idle gaps (mean GAP_MS), so some exceed the timeout.
  const session = async (i: number) => {
    const client = clients[i]!;
    let generation: string | null = null;
    await sleep(RAMP_MS !== undefined ? (RAMP_MS * i) / n : Math.random() * Math.min(GAP_MS, SECONDS * 500));
    let first = true;
    while (Date.now() < until) {
      const burst = 1 + Math.floor(Math.random() * 3);
      for (let k = 0; k < burst && Date.now() < until; k++) {
        const steady = Date.now() >= steadyFrom;
        const t = process.hrtime.bigint();
        try {
          const report = (await within(client.request({ op: "exec", code: "1+1", session: `load-${i}` }), DRAIN_MS)) as { generation: string; status: string; error: string | null };
          const ms = Number(process.hrtime.bigint() - t) / 1e6;
          if (report.status !== "ok") throw new Error(`cell ${report.status}: ${report.error}`);
          if (first) r.firsts.push(ms);
          if (steady) {
            r.all.push(ms);
            (report.generation === generation ? r.warm : r.starts).push(ms);
          }
          generation = report.generation;
        } catch (error) {
          r.errors++;
          r.errorKinds.add((error as Error).message.slice(0, 160));
        }
        if (first) {
          first = false;
          firstDone();
        }
      }
      await sleep(Math.min(-Math.log(1 - Math.random()) * GAP_MS, until - Date.now()));
    }
  };
  await Promise.all(clients.map((_, i) => session(i)));
  r.seconds = (Date.now() - steadyFrom) / 1000;
  sampler.send({ op: "stop" });
  Object.assign(r, await sampled);
  const status = (await clients[0]!.request({ op: "status" })) as Record<string, unknown>;
  const culled = (status.workbench_pool as { culled?: number } | undefined)?.culled;
  r.culled = culled === undefined ? null : culled - culledAtSteady;
  r.liveEnd = (status.workbenches as Array<{ state: string }>).filter((b) => b.state !== "dead").length;
  for (const c of clients) c.close();
  daemon.kill("SIGTERM");
  await new Promise((resolve) => daemon.once("exit", resolve));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
  for (const s of [r.firsts, r.all, r.warm, r.starts]) s.sort((a, b) => a - b);
  return r;
}

const MiB = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
const MiB1 = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;
const pct = (s: number[]) => (s.length === 0 ? "none" : `p50 ${percentile(s, 50).toFixed(1)} / p99 ${percentile(s, 99).toFixed(1)} ms (${s.length})`);
function report(r: RunResult, base?: RunResult): void {
  const per = r.peak.live > 0 ? `${MiB1(r.peak.rss / r.peak.live)} RSS, ${MiB1(r.peak.pss / r.peak.live)} PSS` : "n/a";
  console.log(`${r.label}`);
  console.log(`  bring-up: every session had its first cell after ${r.bringUpSeconds.toFixed(1)} s; first cells ${pct(r.firsts)}`);
  console.log(`  steady round trip: all ${pct(r.all)}; live workbench ${pct(r.warm)}; starting one ${pct(r.starts)}`);
  console.log(`  steady: ${(r.all.length / r.seconds).toFixed(1)} cells/s over ${r.seconds.toFixed(0)} s, culled ${r.culled ?? "n/a"}; errors (both phases) ${r.errors}${r.errorKinds.size ? ` (${[...r.errorKinds].slice(0, 3).join(" | ")})` : ""}`);
  console.log(`  steady CPU: daemon ${(r.daemonCpu / r.seconds).toFixed(2)} cores, whole tree ${(r.treeCpu / r.seconds).toFixed(2)} cores`);
  console.log(`  daemon RSS max ${MiB(r.daemonRssMax)}, daemon fds max ${r.daemonFdsMax}; tree RSS max ${MiB(r.treeRssMax)} (end ${MiB(r.treeRssEnd)}); live workbenches max ${r.liveMax}, end ${r.liveEnd}`);
  console.log(`  per live workbench (worker + guard, at ${r.peak.live} live): ${per}`);
  if (base) console.log(`  vs no culling: all p99 ${(percentile(r.all, 99) / percentile(base.all, 99)).toFixed(2)}x, tree RSS max ${(r.treeRssMax / base.treeRssMax).toFixed(2)}x`);
}

if (!existsSync(join(HOST_DIR, "dist", "cli.js"))) {
  console.log("sessions bench: skipped, run `pnpm build` first (the bin runs dist/)");
} else {
  for (const n of COUNTS) {
    const base = BASELINE ? await run(n, false) : undefined;
    if (base) report(base);
    report(await run(n, true), base);
  }
}
