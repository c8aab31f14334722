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

/** One model step's host work, ms: its wall time, the calls in it, and the host process's CPU time and where it fell. */
export interface StepWork {
  /** From one request's row to the next one's. */
  wall: number;
  /** The route call and the cell execute as the host timed them (waiting on the server and the worker included). */
  route: number;
  cell: number;
  /** The step's wall time less the route call and the cell execute: the host's work outside the calls, on the step's critical path. */
  outside: number;
  /** The host process's CPU time in the whole step (every thread: the turn loop, GC, I/O). */
  cpu: number;
  /** Of which inside the route call (request serialization, HTTP, the streamed reply parsed chunk by chunk) ... */
  cpuRoute: number;
  /** ... and inside the cell execute (dispatch, frames, execution rows). */
  cpuCell: number;
}

/**
 * A driven host's model steps as its notifications tell them: when each request's row was
 * written, and the route call and cell execute of each step (ms). `overhead` is the host's own
 * work per step after `warmup` steps: the time between two requests less the route call and the
 * cell between them. That leaves out the host's work *inside* the calls (the request serialized
 * by the client, the reply's SSE parsed chunk by chunk, the cell dispatched and its frames read),
 * so `work` also reads the host process's CPU time (process.cpuUsage) across each step and inside
 * each call: waiting on the server or the worker costs none, parsing does, and a loaded machine
 * stretches wall time but not CPU time. Everything in the bench's process counts as host work:
 * keep servers and proxies in processes of their own.
 */
export function watchSteps(host: Host): { route: number[]; cell: number[]; overhead: (warmup: number) => number[]; work: (warmup: number) => StepWork[] } {
  // Per step, in request order; a step's cells are summed (a reply may carry none, or several).
  const requests: number[] = [];
  const cpuAt: number[] = [];
  const route: number[] = [];
  const cell: number[] = [];
  const cpuRoute: number[] = [];
  const cpuCell: number[] = [];
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let mark = 0;
  host.subscribe((n) => {
    if (n.type !== "model") return;
    const last = requests.length - 1;
    if (n.phase === "request") {
      requests.push(performance.now());
      mark = cpuNow();
      cpuAt.push(mark);
      route.push(NaN);
      cpuRoute.push(NaN);
      cell.push(0);
      cpuCell.push(0);
    } else if (n.phase === "reply" && last >= 0) {
      route[last] = n.route_ms as number;
      cpuRoute[last] = cpuNow() - mark;
    } else if (n.phase === "cell") {
      mark = cpuNow();
    } else if (n.phase === "result" && last >= 0) {
      cell[last]! += n.cell_ms as number;
      cpuCell[last]! += cpuNow() - mark;
    }
  });
  // Steps after the warm-up whose next request was sent (the last request starts no measured step).
  const measured = (warmup: number) => Array.from({ length: Math.max(0, requests.length - 1 - warmup) }, (_, k) => warmup + k).filter((i) => !Number.isNaN(route[i]!));
  const overhead = (warmup: number) => measured(warmup).map((i) => requests[i + 1]! - requests[i]! - route[i]! - cell[i]!);
  const work = (warmup: number) =>
    measured(warmup).map((i) => {
      const wall = requests[i + 1]! - requests[i]!;
      return { wall, route: route[i]!, cell: cell[i]!, outside: wall - route[i]! - cell[i]!, cpu: cpuAt[i + 1]! - cpuAt[i]!, cpuRoute: cpuRoute[i]!, cpuCell: cpuCell[i]! };
    });
  return { route, cell, overhead, work };
}
