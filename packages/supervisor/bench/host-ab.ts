// A/B of two supervisor trees (the host side of a cell) in one run, on one Python worker tree:
// a baseline's src/ (another commit's, extracted under this package so its imports resolve) and this
// checkout's, each with its own worker, interleaved round by round in alternating order, beside the
// ping-pong floor. Prints the `1+1` round trip p50 of each against the floor.
//   (cd ../.. && git archive main packages/supervisor/src) | (mkdir -p .host-base && tar -x -C .host-base --strip-components=3)
//   [BASE_SRC=.host-base] [ROUNDS=4000] pnpm exec tsx --conditions=@klbr/source bench/host-ab.ts
//   rm -rf .host-base
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { openPingPong, pct } from "./ping-pong.js";
import * as NEW from "../src/index.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const PY = fileURLToPath(new URL("../../../python", import.meta.url));
const BASE = (await import(pathToFileURL(resolve(PACKAGE, process.env.BASE_SRC ?? ".host-base", "index.ts")).href)) as typeof NEW;
const now = () => performance.now();

const mods = [BASE, NEW];
const names = ["host-base", "host-new"];
const workers = [];
let gen = 0;
for (const m of mods) workers.push(await m.startWorker({ role: "workbench", sessionId: "bench", generation: `g-${++gen}`, pythonPath: [PY] }));
const echo = await openPingPong(NEW.resolvePython());
const rounds = Number(process.env.ROUNDS ?? 4000);
const times: number[][] = [[], []];
const floor: number[] = [];
for (let i = 0; i < rounds + 500; i++) {
  for (const k of i % 2 ? [0, 1] : [1, 0]) {
    const t = now();
    const done = await workers[k]!.execute("1+1");
    if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
    if (i >= 500) times[k]!.push(now() - t);
  }
  const v = await echo.once(i);
  if (i >= 500) floor.push(v);
}
await Promise.all([...workers.map((w) => w.shutdown()), echo.close()]);
const b = pct(floor, 50);
console.log(`ping-pong p50 ${b.toFixed(3)} ms`);
for (let k = 0; k < 2; k++) console.log(`${names[k]!.padEnd(10)} p50 ${pct(times[k]!, 50).toFixed(3)} ms x${(pct(times[k]!, 50) / b).toFixed(2)}`);
