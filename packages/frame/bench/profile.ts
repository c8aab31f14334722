// pnpm -C packages/frame profile [decode|encode]: runs the codec on each bench shape under the
// V8 CPU profiler (the same sampler as node --cpu-prof) and prints the functions with the most
// self time, a short text summary instead of a .cpuprofile file.
import { Session } from "node:inspector/promises";
import { decodePayload, encodePayload } from "../src/index";
import { SHAPES } from "./payloads";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount: number;
}

const mode = process.argv[2] === "encode" ? "encode" : "decode";
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });

for (const shape of SHAPES) {
  const values = Array.from({ length: Math.min(shape.frames, 200) }, (_, i) => shape.make(i));
  const payloads = values.map((v) => encodePayload(v));
  const bytes = payloads.reduce((n, p) => n + p.length, 0);
  const work = mode === "decode" ? () => payloads.forEach((p) => decodePayload(p)) : () => values.forEach((v) => encodePayload(v));
  const rounds = Math.max(3, Math.round(60e6 / bytes));
  for (let r = 0; r < 3; r++) work(); // warm up out of the profile
  await session.post("Profiler.start");
  for (let r = 0; r < rounds; r++) work();
  const { profile } = await session.post("Profiler.stop");
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes as Node[]) {
    const { functionName, url } = node.callFrame;
    const file = url.replace(/^.*\/(src|node_modules)\//, "$1/");
    const key = `${functionName || "(anonymous)"} ${file}`.trim();
    self.set(key, (self.get(key) ?? 0) + node.hitCount);
    total += node.hitCount;
  }
  console.log(`\n${mode} ${shape.name}: ${rounds} rounds of ${payloads.length} payloads, ${total} samples`);
  for (const [key, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
    console.log(`  ${((100 * hits) / total).toFixed(1).padStart(5)}%  ${key}`);
  }
}
session.disconnect();
