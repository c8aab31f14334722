// `pnpm bench`: remote workers over ssh on loopback, each figure beside its baseline from the same
// run. Needs sshd (test-support/sshd.ts starts one on a free port); prints why when it cannot.
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startWorker, type Worker } from "@klbr/supervisor";
import { startTestSshd } from "../../../test-support/sshd.js";
import { collectRuntime, ensureRuntime, installScript, openRemoteWorker, parseTarget, sshRun, startRemoteWorker, type Target } from "../src/index.js";

const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));
const now = () => performance.now();
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (v: number) => `${v.toFixed(2)} ms`;
function line(name: string, value: number, baseline?: [string, number]): void {
  const parts = [name.padEnd(40), ms(value).padEnd(12)];
  if (baseline) parts.push(`${baseline[0]} ${ms(baseline[1])}`.padEnd(36), `x${(value / baseline[1]).toFixed(2)}`);
  console.log(parts.join(" "));
}

const { sshd, skip } = await startTestSshd();
if (!sshd) {
  console.log(`remote bench skipped: ${skip}`);
  process.exit(0);
}
let seq = 0;
const target = (): Target => parseTarget(sshd.target("bench", `${sshd.dir}/b${++seq}`));
const bundle = collectRuntime(PYTHON_DIR);
const script = installScript(PYTHON_DIR);

try {
  // 1. `ssh host true`: connect, authenticate, run nothing, exit. The floor of anything ssh does.
  const t0 = target();
  const sshTrue: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = now();
    await sshRun(t0, "true");
    sshTrue.push(now() - t);
  }
  const floor = median(sshTrue);

  // 2. ensure, cold (runtime copied into a fresh workdir) and warm (already there), each to a ready
  //    worker (hello received, remote pid known); interleaved, one of each per round.
  const cold: number[] = [];
  const warm: number[] = [];
  const warmTarget = target();
  await ensureRuntime(warmTarget, bundle, script);
  for (let i = 0; i < 5; i++) {
    for (const [t, into] of [[target(), cold], [warmTarget, warm]] as const) {
      const start = now();
      const { remote } = await openRemoteWorker({ target: t, bundle, script, sessionId: "bench", generation: `g-${++seq}` });
      into.push(now() - start);
      await remote.worker.shutdown();
    }
  }

  // 3. `1+1` round trips, remote (through the ssh forward) and local, interleaved.
  const remote = await startRemoteWorker({ target: warmTarget, runtime: await ensureRuntime(warmTarget, bundle, script), sessionId: "bench", generation: "g-rt" });
  const local: Worker = await startWorker({ role: "workbench", sessionId: "bench", generation: "g-local", pythonPath: [PYTHON_DIR] });
  const remoteRt: number[] = [];
  const localRt: number[] = [];
  for (let i = 0; i < 30; i++) {
    await remote.worker.execute("1+1");
    await local.execute("1+1");
  }
  for (let i = 0; i < 300; i++) {
    let t = now();
    await remote.worker.execute("1+1");
    remoteRt.push(now() - t);
    t = now();
    await local.execute("1+1");
    localRt.push(now() - t);
  }
  await Promise.all([remote.worker.shutdown(), local.shutdown()]);

  console.log(`remote workers over ssh on 127.0.0.1 (medians; ${bundle.files.length} runtime files, ${(bundle.files.reduce((n, f) => n + f.data.length, 0) / 1024).toFixed(0)} KiB)`);
  line("ssh host true", floor);
  line("remote 1+1 (execute through the forward)", median(remoteRt), ["local 1+1", median(localRt)]);
  line("remote 1+1 minus local 1+1", median(remoteRt) - median(localRt), ["ssh host true", floor]);
  line("ensure cold (refused, copy, start)", median(cold), ["ssh host true", floor]);
  line("ensure warm (start)", median(warm), ["ssh host true", floor]);
  line("ensure cold - warm (the copy)", median(cold) - median(warm), ["ssh host true", floor]);
} finally {
  await sshd.stop();
  rmSync(sshd.dir, { recursive: true, force: true });
}
