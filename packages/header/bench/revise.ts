// Prints how revise / resolve / render cost relative to hashing the same text once, measured in
// this run (ratios, not absolute times). Run: pnpm bench (or npx tsx bench/revise.ts).
import { performance } from "node:perf_hooks";
import { observe, pinAtStart, renderObservation, resolve, revise, sha256Hex, type SourceInput } from "../src/index.js";

const LINES = 2000;
const base = Array.from({ length: LINES }, (_, i) => `rule ${i}: keep the receipts for step ${i}\n`).join("");
const edited = base.replace("rule 100:", "rule one hundred:").replace("rule 1500:", "rule 1500 (amended):") + "a new closing rule\n";
const rewritten = Array.from({ length: LINES }, (_, i) => `clause ${i}\n`).join("");
const next = (text: string): SourceInput[] => [{ name: "contract", text }];

function time(label: string, runs: number, fn: () => unknown): number {
  for (let i = 0; i < Math.min(runs, 5); i++) fn();
  const start = performance.now();
  for (let i = 0; i < runs; i++) fn();
  const each = (performance.now() - start) / runs;
  return each;
}

const baseline = time("sha256", 200, () => sha256Hex(base));
const pin = pinAtStart(next(base), 1);
const revision = observe([pin], next(edited), { origin: "host" }, 2)!;
const rows: [string, number][] = [
  ["revise: 3 edits in 2,000 lines", time("revise", 50, () => revise(base, next(edited)))],
  ["revise: whole rewrite (falls back to full)", time("rewrite", 5, () => revise(base, next(rewritten)))],
  ["resolve: pin + 1 diff", time("resolve", 50, () => resolve([pin, revision]))],
  ["renderObservation with base check", time("render", 50, () => renderObservation(revision, base))],
];
console.log(`baseline: sha256 of a ${base.length}-byte, ${LINES}-line text`);
for (const [label, each] of rows) console.log(`${label.padEnd(46)} ${(each / baseline).toFixed(1)}x baseline`);
