// What the host benches share: the percentile they report, the way they print milliseconds and
// ratios against a baseline measured in the same run, and the step timings of a driven session.
import { performance } from "node:perf_hooks";
import type { Host } from "../src/runtime/host";

/** The p-th percentile (0..100, nearest rank) of `values`, sorted or not; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Milliseconds, three decimals. */
export const ms = (v: number): string => `${v.toFixed(3)} ms`;

/** One figure beside its baseline of the same run and their ratio (`x1.04`), with an optional target. */
export function ratioLine(name: string, value: number, base: number, opts: { baseline: string; width: number; target?: string }): void {
  console.log(`${name.padEnd(opts.width)} ${ms(value).padEnd(14)} ${opts.baseline} ${ms(base).padEnd(14)} x${(value / base).toFixed(2)}${opts.target ? `  target ${opts.target}` : ""}`);
}

/**
 * A driven host's model steps as its notifications tell them: when each request's row was
 * written, and the route call and cell execute of each step (ms). `overhead` is the host's own
 * work per step after `warmup` steps: the time between two requests less the route call and the
 * cell between them.
 */
export function watchSteps(host: Host): { route: number[]; cell: number[]; overhead: (warmup: number) => number[] } {
  const requests: number[] = [];
  const route: number[] = [];
  const cell: number[] = [];
  host.subscribe((n) => {
    if (n.type !== "model") return;
    if (n.phase === "request") requests.push(performance.now());
    if (n.phase === "reply") route.push(n.route_ms as number);
    if (n.phase === "result") cell.push(n.cell_ms as number);
  });
  const overhead = (warmup: number) => {
    const out: number[] = [];
    for (let i = warmup; i + 1 < requests.length && i < cell.length; i++) out.push(requests[i + 1]! - requests[i]! - route[i]! - cell[i]!);
    return out;
  };
  return { route, cell, overhead };
}
