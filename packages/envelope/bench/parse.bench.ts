// pnpm bench: envelopes/s and MB/s of parseEnvelope on typical messages, against a baseline
// measured in the same run: structuredClone of the same value (parsing also returns a fresh copy).
import { performance } from "node:perf_hooks";
import { parseEnvelope } from "../src/index.js";

const base = { version: 1, session_id: "root", generation: "g-1" };
const samples: [string, unknown][] = [
  ["shutdown", { ...base, message: { kind: "shutdown" } }],
  [
    "host_request workspace.run",
    { ...base, message: { kind: "host_request", id: "req-1", execution_id: "exec-1", request: { method: "workspace.run", argv: ["cargo", "check"], cwd: ".", env: {}, timeout_ms: 120000 } } },
  ],
  ["execute 16 KiB", { ...base, message: { kind: "execute", id: "cell-1", code: "x = 1\n".repeat(2731) } }],
  [
    "completed 256 records / 64 KiB",
    {
      ...base,
      message: {
        kind: "completed",
        id: "cell-1",
        result: { kind: "cell", status: "ok", output: Array.from({ length: 256 }, () => ({ stream: "stdout", text: "y".repeat(255) })), truncated_bytes: 0, error: null },
      },
    },
  ],
];

function rate(run: () => void, bytes: number): { perSecond: number; mbPerSecond: number } {
  for (let i = 0; i < 200; i++) run(); // warm up
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < 400) {
    for (let i = 0; i < 50; i++) run();
    count += 50;
    elapsed = performance.now() - start;
  }
  const perSecond = (count / elapsed) * 1000;
  return { perSecond, mbPerSecond: (perSecond * bytes) / 1e6 };
}

console.log("message                            parse/s      MB/s   clone/s   ratio");
for (const [name, value] of samples) {
  const bytes = Buffer.byteLength(JSON.stringify(value));
  const ours = rate(() => void parseEnvelope(value, { sessionId: "root", generation: "g-1" }), bytes);
  const baseline = rate(() => void structuredClone(value), bytes);
  console.log(
    `${name.padEnd(32)} ${ours.perSecond.toFixed(0).padStart(9)} ${ours.mbPerSecond.toFixed(1).padStart(9)} ${baseline.perSecond.toFixed(0).padStart(9)} ${(ours.perSecond / baseline.perSecond).toFixed(2).padStart(7)}`,
  );
}
