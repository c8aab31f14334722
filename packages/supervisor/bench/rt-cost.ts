// Where a `1+1` round trip's time goes: wall p50 and CPU per round trip on each side (this process;
// the peer from /proc/<pid>/stat, all its threads), for the Python worker, the thin Node worker and
// the bare ping-pong, measured in interleaved blocks of the same run.
//   [ROUNDS=3000] pnpm exec tsx --conditions=@klbr/source bench/rt-cost.ts
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openPingPong, pct } from "./ping-pong.js";
import { resolvePython, startWorker } from "../src/index.js";

const PY = fileURLToPath(new URL("../../../python", import.meta.url));
const NODE_WORKER = fileURLToPath(new URL("./node-worker.mjs", import.meta.url));
const python = resolvePython();
const now = () => performance.now();
const TICK_US = 1e6 / 100; // USER_HZ

function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}
const hostCpu = () => { const u = process.cpuUsage(); return u.user + u.system; };

const py = await startWorker({ role: "workbench", sessionId: "bench", generation: "g-1", pythonPath: [PY] });
const thin = await startWorker({ role: "workbench", sessionId: "bench", generation: "g-2", pythonPath: [PY], command: [process.execPath, NODE_WORKER] });
const echo = await openPingPong(python);
const echoPid = Number(readFileSync("/proc/self/task/" + process.pid + "/children", "utf8").trim().split(" ").at(-1));
const kinds = [
  { name: "python worker", pid: py.pid, once: async () => { const t = now(); await py.execute("1+1"); return now() - t; } },
  { name: "thin node worker", pid: thin.pid, once: async () => { const t = now(); await thin.execute("1+1"); return now() - t; } },
  { name: "ping-pong", pid: echoPid, once: (i: number) => echo.once(i) },
];
const rounds = Number(process.env.ROUNDS ?? 3000);
const block = 100;
const wall = kinds.map(() => [] as number[]);
const host = kinds.map(() => 0);
const peer = kinds.map(() => 0);
for (let b = -5; b < rounds / block; b++) {
  for (let k = 0; k < kinds.length; k++) {
    const kind = kinds[k]!;
    const h0 = hostCpu(), p0 = cpuOf(kind.pid);
    for (let i = 0; i < block; i++) { const v = await kind.once(i); if (b >= 0) wall[k]!.push(v); }
    if (b >= 0) { host[k]! += hostCpu() - h0; peer[k]! += cpuOf(kind.pid) - p0; }
  }
}
await Promise.all([py.shutdown(), thin.shutdown(), echo.close()]);
const base = pct(wall[2]!, 50);
for (let k = 0; k < kinds.length; k++) {
  const n = wall[k]!.length;
  console.log(`${kinds[k]!.name.padEnd(18)} p50 ${pct(wall[k]!, 50).toFixed(3)} ms x${(pct(wall[k]!, 50) / base).toFixed(2)}  host cpu ${(host[k]! / n).toFixed(1)} us/rt  peer cpu ${(peer[k]! / n).toFixed(1)} us/rt`);
}
