// pnpm bench (apps/host): sessions at scale (issue 23, C19). N sessions, each its own control
// connection, run `1+1` in bursts at random intervals against one `klbr serve`; measured with
// idle culling on (`--idle-timeout`) and, in the same run, with culling off as the baseline.
// Reports round-trip p50/p99, the daemon's RSS, the whole tree's RSS (daemon + workers + guards),
// cells/s, live workbenches and the cull count. A load test, not a timed test: it asserts nothing.
//
// KLBR_BENCH_SESSIONS=100,500 (the counts), KLBR_BENCH_SECONDS=90 (each run's length),
// KLBR_BENCH_IDLE=30s (the idle timeout of the culling runs), KLBR_BENCH_GAP_S=20 (mean idle gap).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ControlClient } from "../src/control/client";
import { percentile } from "./figures";

const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(HOST_DIR, "bin", "klbr.js");
const COUNTS = (process.env.KLBR_BENCH_SESSIONS ?? "100,500").split(",").map(Number);
const SECONDS = Number(process.env.KLBR_BENCH_SECONDS ?? 90);
const IDLE = process.env.KLBR_BENCH_IDLE ?? "30s";
const GAP_MS = Number(process.env.KLBR_BENCH_GAP_S ?? 20) * 1000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resident set of one process in bytes (0 once it is gone). */
function rss(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The daemon and every process below it, by ppid links in one /proc snapshot. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]!) ?? []));
  return out;
}

interface RunResult {
  label: string;
  samples: number[];
  cells: number;
  errors: number;
  seconds: number;
  daemonRssMax: number;
  treeRssMax: number;
  treeRssEnd: number;
  liveEnd: number;
  culled: number | null;
}

async function startDaemon(dataDir: string, args: string[]): Promise<ChildProcess> {
  const daemon = spawn(process.execPath, [BIN, "--data-dir", dataDir, "serve", "--no-drive", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  await new Promise<void>((resolve, reject) => {
    daemon.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("serving")) resolve();
    });
    daemon.once("exit", (code) => reject(new Error(`klbr serve exited ${code}: ${err}`)));
  });
  return daemon;
}

async function run(n: number, culling: boolean): Promise<RunResult> {
  const dataDir = mkdtempSync("/tmp/klbr-bs-");
  const workspace = mkdtempSync("/tmp/klbr-bsw-");
  const daemon = await startDaemon(dataDir, ["-w", workspace, ...(culling ? ["--idle-timeout", IDLE] : [])]);
  const socket = join(dataDir, "klbr.sock");
  const clients = await Promise.all(Array.from({ length: n }, () => ControlClient.connect(socket)));
  const samples: number[] = [];
  let errors = 0;
  let daemonRssMax = 0;
  let treeRssMax = 0;
  const started = Date.now();
  const until = started + SECONDS * 1000;
  const sampler = setInterval(() => {
    daemonRssMax = Math.max(daemonRssMax, rss(daemon.pid!));
    treeRssMax = Math.max(treeRssMax, tree(daemon.pid!).reduce((sum, pid) => sum + rss(pid), 0));
  }, 1000);
  // Each session: a first cell at a random moment of the first gap, then bursts of 1-3 cells
  // separated by exponentially distributed idle gaps (mean GAP_MS), so some exceed the timeout.
  const session = async (i: number) => {
    const client = clients[i]!;
    await sleep(Math.random() * Math.min(GAP_MS, SECONDS * 500));
    while (Date.now() < until) {
      const burst = 1 + Math.floor(Math.random() * 3);
      for (let k = 0; k < burst && Date.now() < until; k++) {
        const t = process.hrtime.bigint();
        try {
          await client.request({ op: "exec", code: "1+1", session: `load-${i}` });
          samples.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors++;
        }
      }
      await sleep(Math.min(-Math.log(1 - Math.random()) * GAP_MS, until - Date.now()));
    }
  };
  await Promise.all(clients.map((_, i) => session(i)));
  clearInterval(sampler);
  const seconds = (Date.now() - started) / 1000;
  const status = (await clients[0]!.request({ op: "status" })) as Record<string, unknown>;
  const pool = status.workbench_pool as { culled?: number } | undefined;
  const treeRssEnd = tree(daemon.pid!).reduce((sum, pid) => sum + rss(pid), 0);
  const liveEnd = (status.workbenches as Array<{ state: string }>).filter((b) => b.state !== "dead").length;
  for (const c of clients) c.close();
  daemon.kill("SIGTERM");
  await new Promise((r) => daemon.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
  samples.sort((a, b) => a - b);
  return { label: `${n} sessions, ${culling ? `--idle-timeout ${IDLE}` : "no culling"}`, samples, cells: samples.length, errors, seconds, daemonRssMax, treeRssMax, treeRssEnd, liveEnd, culled: pool?.culled ?? null };
}

const MiB = (b: number) => `${(b / 1048576).toFixed(0)} MiB`;
function report(r: RunResult, base?: RunResult): void {
  const ratio = base ? `  (p99 ${(percentile(r.samples, 99) / percentile(base.samples, 99)).toFixed(2)}x, tree RSS ${(r.treeRssMax / base.treeRssMax).toFixed(2)}x of no culling)` : "";
  console.log(
    `${r.label.padEnd(36)} p50 ${percentile(r.samples, 50).toFixed(2)} ms  p99 ${percentile(r.samples, 99).toFixed(2)} ms  ${(r.cells / r.seconds).toFixed(1)} cells/s  ` +
      `errors ${r.errors}  daemon RSS max ${MiB(r.daemonRssMax)}  tree RSS max ${MiB(r.treeRssMax)} (end ${MiB(r.treeRssEnd)}, ${r.liveEnd} live)  culled ${r.culled ?? "n/a"}${ratio}`,
  );
}

if (!existsSync(join(HOST_DIR, "dist", "cli.js"))) {
  console.log("sessions bench: skipped, run `pnpm build` first (the bin runs dist/)");
} else {
  for (const n of COUNTS) {
    const base = await run(n, false);
    report(base);
    report(await run(n, true), base);
  }
}
