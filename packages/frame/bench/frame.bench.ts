// pnpm bench: decode (and encode) throughput of @klbr/frame against a no-checks baseline
// measured in the same run, then the same for the Python module. Prints ratios, asserts nothing.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { encodeFrame, FrameDecoder } from "../src/index";
import { SHAPES } from "./payloads";

const baselineText = new TextDecoder();
function baselineDecode(stream: Uint8Array): unknown[] {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const out: unknown[] = [];
  for (let at = 0; at < stream.length; ) {
    const length = view.getUint32(at);
    out.push(JSON.parse(baselineText.decode(stream.subarray(at + 4, at + 4 + length))));
    at += 4 + length;
  }
  return out;
}

function klbrDecode(stream: Uint8Array): unknown[] {
  const decoder = new FrameDecoder();
  const out = decoder.push(stream);
  decoder.end();
  return out;
}

const baselineUtf8 = new TextEncoder();
function baselineEncode(values: unknown[]): number {
  let n = 0;
  for (const v of values) {
    const body = baselineUtf8.encode(JSON.stringify(v));
    const out = new Uint8Array(4 + body.length);
    new DataView(out.buffer).setUint32(0, body.length);
    out.set(body, 4);
    n += out.length;
  }
  return n;
}

function klbrEncode(values: unknown[]): number {
  let n = 0;
  for (const v of values) n += encodeFrame(v).length;
  return n;
}

// Runs fn in batches for ~ms milliseconds of this process's CPU time (not wall time, so other
// processes on a shared machine skew the figures less); returns calls per CPU second.
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function rate(fn: () => unknown, ms: number, batch: number): number {
  let calls = 0;
  const start = cpuMs();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < batch; i++) fn();
    calls += batch;
    now = cpuMs();
  }
  return (calls * 1000) / (now - start);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// Alternates baseline and candidate in short paired rounds (so load from other processes hits
// both alike) and reports the medians of the rates and of the per-round ratios.
function compare(base: () => unknown, ours: () => unknown, batch: number): { base: number; ours: number; ratio: number } {
  rate(base, 200, batch);
  rate(ours, 200, batch);
  const b: number[] = [];
  const o: number[] = [];
  const r: number[] = [];
  for (let round = 0; round < 15; round++) {
    const x = rate(base, 80, batch);
    const y = rate(ours, 80, batch);
    b.push(x);
    o.push(y);
    r.push(y / x);
  }
  return { base: median(b), ours: median(o), ratio: median(r) };
}

interface Row {
  name: string;
  frames: number;
  bytes: number;
  target?: number;
  values: unknown[];
}

const rows: Row[] = [];
for (const shape of SHAPES) {
  const values = Array.from({ length: shape.frames }, (_, i) => shape.make(i));
  const bytes = values.reduce<number>((n, v) => n + encodeFrame(v).length, 0);
  rows.push({ name: shape.name, frames: shape.frames, bytes, target: shape.target, values });
}

const mb = (bytesPerCall: number, callsPerSecond: number) => ((bytesPerCall * callsPerSecond) / 1e6).toFixed(0).padStart(6);
const fps = (frames: number, callsPerSecond: number) => Math.round(frames * callsPerSecond).toLocaleString("en-US").padStart(10);

console.log(`node ${process.version}; CPU-time rates; medians of 15 paired rounds (rates and per-round ratios)`);
console.log("decode".padEnd(40), "frame bytes", "   baseline MB/s   frames/s", "   @klbr/frame MB/s   frames/s", "  ratio  target");
for (const r of rows) {
  const stream = Uint8Array.from(r.values.flatMap((v) => [...encodeFrame(v)]));
  if (JSON.stringify(klbrDecode(stream)) !== JSON.stringify(baselineDecode(stream))) throw new Error(`${r.name}: decoders disagree`);
  const { base, ours, ratio } = compare(() => baselineDecode(stream), () => klbrDecode(stream), Math.max(1, Math.round(1e6 / stream.length)));
  const verdict = r.target === undefined ? "" : `${r.target.toFixed(2)} ${ratio >= r.target ? "met" : "MISSED"}`;
  console.log(
    r.name.padEnd(40),
    String(Math.round(r.bytes / r.frames)).padStart(11),
    `   ${mb(r.bytes, base)}    ${fps(r.frames, base)}`,
    `      ${mb(r.bytes, ours)}    ${fps(r.frames, ours)}`,
    `   ${ratio.toFixed(2)}  ${verdict}`,
  );
}
console.log("\nencode (JSON.stringify + TextEncoder + header vs encodeFrame with its checks)");
for (const r of rows) {
  const { base, ours, ratio } = compare(() => baselineEncode(r.values), () => klbrEncode(r.values), 1);
  console.log(r.name.padEnd(40), `baseline ${mb(r.bytes, base)} MB/s  @klbr/frame ${mb(r.bytes, ours)} MB/s  ratio ${ratio.toFixed(2)}`);
}

const python = process.env.KLBR_PYTHON ?? "python3";
const script = fileURLToPath(new URL("../../../python/bench/bench_frame.py", import.meta.url));
console.log(`\n${python} ${script}`);
const run = spawnSync(python, ["-B", script], { stdio: "inherit" });
if (run.status !== 0) process.exitCode = run.status ?? 1;
