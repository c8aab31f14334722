// pnpm exec tsx --conditions=@klbr/source bench/profile-rt.ts [python|thin]: the host's side of
// `1+1` round trips under the V8 CPU profiler (the sampler of node --cpu-prof), printed as the
// functions with the most self time. The worker's side: python/bench/profile_worker.py.
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { resolvePython, startWorker } from "../src/index.js";

interface Node {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}
const PY = fileURLToPath(new URL("../../../python", import.meta.url));
const NODE_WORKER = fileURLToPath(new URL("./node-worker.mjs", import.meta.url));
const PROFILE_SCRIPT = fileURLToPath(new URL("../../../python/bench/profile_worker.py", import.meta.url));
const which = process.argv[2] === "thin" ? "thin" : "python";
const w = await startWorker({
  role: "workbench",
  sessionId: "bench",
  generation: "g-1",
  pythonPath: [PY],
  ...(which === "thin" ? { command: [process.execPath, NODE_WORKER] } : {}),
  // PROFILE_WORKER=out.txt: the Python worker runs under cProfile too (python/bench/profile_worker.py).
  ...(which === "python" && process.env.PROFILE_WORKER ? { command: [resolvePython(), PROFILE_SCRIPT, process.env.PROFILE_WORKER] } : {}),
});
const rounds = Number(process.env.ROUNDS ?? 5000);
for (let i = 0; i < 1000; i++) await w.execute("1+1");
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 50 });
await session.post("Profiler.start");
for (let i = 0; i < rounds; i++) await w.execute("1+1");
const { profile } = await session.post("Profiler.stop");
session.disconnect();
await w.shutdown();
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes as Node[]) {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(src|node_modules|packages)\//, "$1/");
  const key = `${functionName || "(anonymous)"} ${file}${file ? `:${lineNumber + 1}` : ""}`.trim();
  self.set(key, (self.get(key) ?? 0) + node.hitCount);
  total += node.hitCount;
}
const idle = self.get("(idle)") ?? 0;
console.log(`host, ${which} worker: ${rounds} round trips, ${total} samples, ${((100 * idle) / total).toFixed(1)}% idle; shares of the busy samples:`);
for (const [key, hits] of [...self].filter(([k]) => k !== "(idle)").sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 25))) {
  console.log(`  ${((100 * hits) / (total - idle)).toFixed(1).padStart(5)}%  ${key}`);
}

// Inclusive time: each function's samples with everything it called (counted once per stack).
const byId = new Map((profile.nodes as Node[]).map((n) => [n.id, n]));
const keyOf = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const file = url.replace(/^.*\/(src|node_modules|packages)\//, "$1/");
  return `${functionName || "(anonymous)"} ${file}${file ? `:${lineNumber + 1}` : ""}`.trim();
};
const inclusive = new Map<string, number>();
const walk = (n: Node, onStack: Set<string>): number => {
  let hits = n.hitCount;
  const key = keyOf(n);
  const fresh = !onStack.has(key);
  if (fresh) onStack.add(key);
  for (const c of n.children ?? []) hits += walk(byId.get(c)!, onStack);
  if (fresh) {
    onStack.delete(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + hits);
  }
  return hits;
};
walk((profile.nodes as Node[])[0]!, new Set());
console.log("inclusive (with callees), shares of the busy samples:");
for (const [key, hits] of [...inclusive].filter(([k]) => k !== "(idle)" && k !== "(root)").sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 25))) {
  console.log(`  ${((100 * hits) / (total - idle)).toFixed(1).padStart(5)}%  ${key}`);
}
