// The sessions bench's sampler, a process of its own (forked by sessions.bench.ts): reading /proc
// for a thousand processes takes a tenth of a second or more, which in the clients' process
// stalled their event loop and showed up as round trips. It samples the daemon's tree every
// KLBR_BENCH_SAMPLE_MS; `mark` records the CPU at the steady state's start; `stop` replies with
// the figures and exits.
import { cpuSeconds, fds, pss, rss, tree, workbenches } from "./procs";

export interface Sampled {
  daemonRssMax: number;
  daemonFdsMax: number;
  treeRssMax: number;
  treeRssEnd: number;
  liveMax: number;
  /** The snapshot with the most live workbenches: worker + guard of each, summed (PSS from a sample). */
  peak: { live: number; rss: number; pss: number };
  /** CPU seconds from `mark` to `stop`: the daemon's own, and the whole tree's. */
  daemonCpu: number;
  treeCpu: number;
}

/** Workbenches whose PSS is read each sample (smaps_rollup of hundreds of processes is slow). */
const PSS_SAMPLE = 16;

const daemon = Number(process.argv[2]);
const every = Number(process.argv[3] ?? 2000);
const s: Sampled = { daemonRssMax: 0, daemonFdsMax: 0, treeRssMax: 0, treeRssEnd: 0, liveMax: 0, peak: { live: 0, rss: 0, pss: 0 }, daemonCpu: 0, treeCpu: 0 };
let mark = { own: 0, tree: 0 };
let ticks = 0;

function sample(): void {
  const parent = tree(daemon);
  s.daemonRssMax = Math.max(s.daemonRssMax, rss(daemon));
  s.daemonFdsMax = Math.max(s.daemonFdsMax, fds(daemon));
  s.treeRssMax = Math.max(s.treeRssMax, [...parent.keys()].reduce((sum, pid) => sum + rss(pid), 0));
  // The per-workbench breakdown every other tick.
  if (ticks++ % 2 !== 0) return;
  const benches = workbenches(parent);
  s.liveMax = Math.max(s.liveMax, benches.length);
  if (benches.length === 0 || benches.length < s.peak.live) return;
  const some = benches.length <= PSS_SAMPLE ? benches : benches.filter((_, k) => k % Math.ceil(benches.length / PSS_SAMPLE) === 0);
  const sum = (of: typeof benches, f: (pid: number) => number) => of.reduce((total, b) => total + f(b.worker) + f(b.guard), 0);
  s.peak = { live: benches.length, rss: sum(benches, rss), pss: (sum(some, pss) / some.length) * benches.length };
}

const timer = setInterval(sample, every);
process.on("message", (message: { op: string }) => {
  if (message.op === "mark") mark = cpuSeconds(daemon);
  if (message.op !== "stop") return;
  clearInterval(timer);
  const end = cpuSeconds(daemon);
  s.daemonCpu = end.own - mark.own;
  s.treeCpu = end.tree - mark.tree;
  s.treeRssEnd = [...tree(daemon).keys()].reduce((sum, pid) => sum + rss(pid), 0);
  process.send!(s, () => process.exit(0));
});
