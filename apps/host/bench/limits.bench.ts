// pnpm bench (apps/host), the limits part (C17): cold start to ready and the `1+1` round trip of a
// workbench under memory/cpu/procs/file limits, by the mechanism this machine picks (a cgroup) and
// by the guard's rlimits, against the same workbench without limits: interleaved in this one run
// (one of each per round), so machine drift weighs on all alike. Every run also measures each
// cell's cost (cgroup counters, or /proc without a cgroup), as the host does.
import { mkdtempSync, rmSync } from "node:fs";
import { MECHANISM_LABELS, parseLimits, prepareLimits, resolvePython, startWorker, type LimitsMechanism, type Worker } from "@klbr/supervisor";
import { defaultPythonDir } from "../src/paths";
import { percentile as pct, ratioLine } from "./figures";

const pythonDir = defaultPythonDir();
const python = resolvePython();
const workspace = mkdtempSync("/tmp/klbr-lb-");
const LIMITS = parseLimits("memory=1GiB,cpu=10m,procs=512,file=1GiB");
const cgroup = prepareLimits(LIMITS)!;
const rlimit = prepareLimits({ ...LIMITS, procs: undefined }, { mechanism: "rlimit" })!;
const kinds = { none: undefined, cgroup, rlimit } as const;
type Kind = keyof typeof kinds;
let gen = 0;

function start(limits: LimitsMechanism | undefined): Promise<Worker> {
  return startWorker({
    role: "workbench",
    sessionId: "bench",
    generation: `g-${++gen}`,
    command: [python, "-m", "klbr.worker"],
    pythonPath: [pythonDir],
    cwd: workspace,
    ...(limits ? { limits } : {}),
  });
}

const line = (name: string, value: number, base: number, target?: string) => ratioLine(name, value, base, { baseline: "no limits", width: 44, target });
const label = (k: Kind) => (k === "cgroup" ? MECHANISM_LABELS[cgroup.kind] : k);

const cold: Record<Kind, number[]> = { none: [], cgroup: [], rlimit: [] };
for (let i = 0; i < 10; i++) {
  for (const kind of Object.keys(kinds) as Kind[]) {
    const t = performance.now();
    const w = await start(kinds[kind]);
    cold[kind].push(performance.now() - t);
    await w.shutdown();
  }
}
for (const kind of ["cgroup", "rlimit"] as const) line(`cold start to ready p50 (${label(kind)})`, pct(cold[kind], 50), pct(cold.none, 50), "<= x1.10");

const live = { none: await start(undefined), cgroup: await start(cgroup), rlimit: await start(rlimit) };
async function once(w: Worker): Promise<number> {
  const t = performance.now();
  const done = await w.execute("1+1");
  if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
  return performance.now() - t;
}
for (let i = 0; i < 300; i++) for (const w of Object.values(live)) await once(w);
const rt: Record<Kind, number[]> = { none: [], cgroup: [], rlimit: [] };
for (let i = 0; i < 2000; i++) for (const kind of Object.keys(live) as Kind[]) rt[kind].push(await once(live[kind]));
await Promise.all(Object.values(live).map((w) => w.shutdown()));
for (const kind of ["cgroup", "rlimit"] as const) {
  line(`execute 1+1 round trip p50 (${label(kind)})`, pct(rt[kind], 50), pct(rt.none, 50), "<= x1.10");
  line(`execute 1+1 round trip p99 (${label(kind)})`, pct(rt[kind], 99), pct(rt.none, 99));
}
await cgroup.close();
rmSync(workspace, { recursive: true, force: true });
