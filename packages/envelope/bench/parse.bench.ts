// pnpm bench: parseEnvelope on typical messages, against two baselines measured in the same run:
// the schema alone (valibot: the whole path before the hand-built fast path, and still the path
// for the other kinds), and structuredClone of the same value (parsing also returns a fresh copy).
// Values go through JSON first, as frames do. Warm figures, in µs per call.
import { performance } from "node:perf_hooks";
import * as v from "valibot";
import { envelopeSchema, makeEnvelope, parseEnvelope, type ExpectedIdentity } from "../src/index.js";

const identity: ExpectedIdentity = { sessionId: "root", generation: "g-1" };
const schema = envelopeSchema(identity);
const CONFIG = { abortEarly: true, abortPipeEarly: true } as const;

const base = { version: 1, session_id: "root", generation: "g-1" };
const env = (message: unknown) => JSON.parse(JSON.stringify({ ...base, message })) as unknown;
const cell = (output: unknown[]) => ({ kind: "cell", status: "ok", output, truncated_bytes: 0, error: null });

const samples: [string, unknown][] = [
  ["shutdown", env({ kind: "shutdown" })],
  ["interrupt", env({ kind: "interrupt", id: "cell-1" })],
  ["execute 1+1", env({ kind: "execute", id: "cell-1", code: "1+1" })],
  ["execute 16 KiB", env({ kind: "execute", id: "cell-1", code: "x = 1\n".repeat(2731) })],
  ["completed cell 1+1", env({ kind: "completed", id: "cell-1", result: cell([{ stream: "result", text: "2" }]) })],
  [
    "completed 256 records / 64 KiB",
    env({ kind: "completed", id: "cell-1", result: cell(Array.from({ length: 256 }, () => ({ stream: "stdout", text: "y".repeat(255) }))) }),
  ],
  ["completed failed", env({ kind: "completed", id: "cell-1", result: { kind: "failed", error: "worker died: SIGKILL" } })],
  ["host_reply ok", env({ kind: "host_reply", id: "req-1", execution_id: "exec-1", reply: { kind: "ok", value: { exit: 0, stdout: "done\n" } } })],
  ["host_reply error", env({ kind: "host_reply", id: "req-1", execution_id: "exec-1", reply: { kind: "error", code: "not_found", message: "no such peer" } })],
  [
    "host_request workspace.run",
    env({ kind: "host_request", id: "req-1", execution_id: "exec-1", request: { method: "workspace.run", argv: ["cargo", "check"], cwd: ".", env: {}, timeout_ms: 120000 } }),
  ],
  // Not a hot kind: the fast path steps aside. parse µs also holds parseEnvelope's schema lookup.
  ["hello (not a hot kind)", env({ kind: "hello", token: "tok-abc", role: "workbench", revision: null, slots: [], skills: null })],
];

function microseconds(run: () => void): number {
  for (let i = 0; i < 200; i++) run(); // warm up
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < 300) {
    for (let i = 0; i < 50; i++) run();
    count += 50;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1000) / count;
}

function row(name: string, ours: number, theirs: number, clone: number, bytes: number): void {
  const mbPerSecond = bytes / ours; // bytes per µs = MB/s
  console.log(
    `${name.padEnd(32)} ${ours.toFixed(2).padStart(9)} ${theirs.toFixed(2).padStart(9)} ${(theirs / ours).toFixed(2).padStart(8)} ${clone.toFixed(2).padStart(9)} ${(clone / ours).toFixed(2).padStart(8)} ${mbPerSecond.toFixed(1).padStart(9)}`,
  );
}

console.log("message                          parse µs schema µs  speedup  clone µs vs clone      MB/s");
for (const [name, value] of samples) {
  if (!v.safeParse(schema, value, CONFIG).success) throw new Error(`sample ${name} is not valid`);
  const bytes = Buffer.byteLength(JSON.stringify(value));
  const ours = microseconds(() => void parseEnvelope(value, identity));
  const theirs = microseconds(() => void v.safeParse(schema, value, CONFIG));
  const clone = microseconds(() => void structuredClone(value));
  row(name, ours, theirs, clone, bytes);
}

// The sending side: makeEnvelope builds the envelope object and validates it.
const execute = { kind: "execute", id: "cell-1", code: "1+1" } as const;
const made = microseconds(() => void makeEnvelope("root", "g-1", execute));
const schemaMade = microseconds(() => void v.safeParse(schema, { version: 1, session_id: "root", generation: "g-1", message: execute }, CONFIG));
const cloneMade = microseconds(() => void structuredClone({ version: 1, session_id: "root", generation: "g-1", message: execute }));
row("makeEnvelope execute 1+1", made, schemaMade, cloneMade, Buffer.byteLength(JSON.stringify({ ...base, message: execute })));
