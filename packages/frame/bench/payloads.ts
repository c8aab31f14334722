// The payload shapes both benches and the profile run use; python/bench/bench_frame.py builds
// the same ones.
const envelope = (message: unknown) => ({ version: 1, session_id: "root", generation: "g-1", message });

/** ~170 B: the small request/reply traffic of every cell. */
export function envelope150(i: number): unknown {
  return envelope({ kind: "host_request", id: `r-${i % 10}`, execution_id: "op-1", request: { method: "local.send", text: "ok" } });
}

/** ~16 KiB of cell output, non-ASCII, many colons inside strings. */
export function cellOutput16k(i: number): unknown {
  const line = (n: number) => `step ${n}: ok ✓ elapsed=${(n * 0.37).toFixed(2)}ms path=/work/src/module_${n}.py\n`;
  let text = "";
  for (let n = 0; text.length < 16_000; n++) text += line(n);
  return envelope({
    kind: "completed",
    id: `op-${i}`,
    result: { kind: "cell", status: "ok", output: [{ stream: "stdout", text }, { stream: "result", text: "42" }], truncated_bytes: 0, error: null },
  });
}

/** ~1 MiB host reply: two long strings with quotes and a non-ASCII dash. */
export function runReply1m(i: number): unknown {
  let stdout = "";
  for (let n = 0; stdout.length < 700_000; n++) stdout += `   Compiling crate_${n} v0.${n % 10}.${n % 7} (/work/crates/crate_${n}) — "ok"\n`;
  return envelope({
    kind: "host_reply",
    id: `req-${i}`,
    execution_id: "op-1",
    reply: { kind: "ok", value: { exit_code: 0, stdout, stderr: "warning: unused import\n".repeat(12_000).slice(0, 250_000), truncated_bytes: 0 } },
  });
}

/** ~650 KB of small objects: the walk-heavy shape. */
export function records1m(i: number): unknown {
  const rows = [];
  for (let n = 0; n < 9_000; n++) rows.push({ id: n + i, name: `row-${n}`, score: n * 0.25, ok: n % 3 === 0, tags: ["a", "b"] });
  return envelope({ kind: "host_reply", id: `req-${i}`, execution_id: "op-1", reply: { kind: "ok", value: { rows } } });
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** A C20 display message carrying a 700 KiB base64 image/png (pseudo-random, seeded by i). */
export function display700k(i: number): unknown {
  let a = (i + 1) * 0x9e3779b1;
  const chars: string[] = [];
  for (let n = 0; n < 700 * 1024; n++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    chars.push(BASE64[a >>> 26]!);
  }
  return envelope({
    kind: "display",
    id: "op-1",
    seq: i % 32,
    data: { "image/png": chars.join(""), "text/plain": "<Figure size 640x480 with 1 Axes>" },
    metadata: { "image/png": { width: 640, height: 480 } },
  });
}

export interface Shape {
  name: string;
  make: (i: number) => unknown;
  frames: number;
  /** The ratio to reach against the baseline (issue 43), when there is one. */
  target?: number;
}

export const SHAPES: Shape[] = [
  { name: "150-byte envelopes", make: envelope150, frames: 2000, target: 0.9 },
  { name: "16 KiB cell outputs", make: cellOutput16k, frames: 60, target: 0.9 },
  { name: "~1 MiB workspace.run reply", make: runReply1m, frames: 2, target: 0.9 },
  { name: "700 KiB base64 display", make: display700k, frames: 2, target: 0.9 },
  { name: "~1 MiB of small records (no target)", make: records1m, frames: 2 },
];
