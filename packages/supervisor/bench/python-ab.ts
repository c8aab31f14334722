// A/B of two Python worker trees in one run, interleaved round by round, so the machine's state
// weighs on both alike: BASE_PY (e.g. `git archive main python | tar -x -C /tmp/base`, then
// BASE_PY=/tmp/base/python) against this checkout's python/. Prints the `1+1` round trip (with and
// without --live-output) against the ping-pong floor, and busy-loop interrupt to completion.
//   BASE_PY=... [WHAT=rt,int] [ROUNDS=2000] [N=40] pnpm exec tsx --conditions=@klbr/source bench/python-ab.ts
import { fileURLToPath } from "node:url";
import { openPingPong, pct } from "./ping-pong.js";
import { resolvePython, startWorker, type Worker } from "../src/index.js";

const NEW_PY = fileURLToPath(new URL("../../../python", import.meta.url));
const BASE_PY = process.env.BASE_PY ?? "/tmp/pyperf-base/python";
const python = resolvePython();
let gen = 0;
const now = () => performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const wb = (py: string, extra: object = {}) => startWorker({ role: "workbench", sessionId: "bench", generation: `g-${++gen}`, pythonPath: [py], ...extra });

async function te(w: Worker, live = false) {
  const t = now();
  const done = await w.execute("1+1", live ? { onOutput: () => undefined } : {});
  if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
  return now() - t;
}
async function roundTrip(rounds: number) {
  const ws = [await wb(BASE_PY), await wb(NEW_PY), await wb(BASE_PY, { liveOutput: true }), await wb(NEW_PY, { liveOutput: true })];
  const names = ["base", "new", "base-live", "new-live"];
  const echo = await openPingPong(python);
  const t: number[][] = ws.map(() => []);
  const e: number[] = [];
  for (let i = 0; i < rounds + 500; i++) {
    for (let k = 0; k < ws.length; k++) { const v = await te(ws[k]!, k >= 2); if (i >= 500) t[k]!.push(v); }
    const v = await echo.once(i); if (i >= 500) e.push(v);
  }
  await Promise.all([...ws.map((w) => w.shutdown()), echo.close()]);
  const b = pct(e, 50);
  console.log(`ping-pong p50 ${b.toFixed(3)}`);
  for (let k = 0; k < ws.length; k++) console.log(`${names[k]!.padEnd(10)} p50 ${pct(t[k]!, 50).toFixed(3)} x${(pct(t[k]!, 50) / b).toFixed(2)}`);
}
async function interrupts(n: number) {
  const ws = [await wb(BASE_PY), await wb(NEW_PY)];
  const names = ["base", "new"];
  const t: number[][] = [[], []];
  const rungs = new Set<string>();
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 2; k++) {
      const w = ws[k]!;
      const cell = w.execute("while True:\n    pass", { id: `busy-${i}` });
      await sleep(30);
      const s = now();
      const o = await w.interrupt(`busy-${i}`);
      await cell;
      t[k]!.push(now() - s);
      rungs.add(o.rung);
    }
  }
  await Promise.all(ws.map((w) => w.shutdown()));
  for (let k = 0; k < 2; k++) console.log(`interrupt ${names[k]!.padEnd(6)} p50 ${pct(t[k]!, 50).toFixed(3)} p90 ${pct(t[k]!, 90).toFixed(3)} rungs ${[...rungs]}`);
}
const what = process.env.WHAT ?? "rt,int";
if (what.includes("rt")) await roundTrip(Number(process.env.ROUNDS ?? 2000));
if (what.includes("int")) await interrupts(Number(process.env.N ?? 40));
