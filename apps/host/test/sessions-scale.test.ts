import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Host } from "../src/runtime/host";
import { isAlive } from "../../../packages/supervisor/src/tree";
import { resultOf, startTestHost } from "./helpers";

// Many sessions on one host (issue 23, C19) at a scale CI affords: what breaks at 500 sessions
// (a storm of starts, descriptors kept per session or per generation) shows here as counts.
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Descriptors this process (the host) holds open now. */
const openFds = () => readdirSync("/proc/self/fd").length;

/** Cull every live workbench now (as if the timeout had passed long ago); the pids that were live. */
async function cullAll(host: Host): Promise<number[]> {
  const pids = host.workbenches.workers().filter((w) => w.state !== "dead").map((w) => w.pid);
  await host.culler!.sweep(performance.now() + 24 * 3600_000);
  return pids;
}

const SESSIONS = 12;

describe("sessions at scale", () => {
  it("a burst of new sessions queues its starts behind the gate: every cell runs, none fails", async () => {
    const started = await startTestHost({ startConcurrency: 2, spares: 1, idleTimeoutMs: 3600_000 });
    close = started.close;
    const { host } = started;
    const reports = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => host.execute(`${i} * 2`, `burst-${i}`)));
    expect(reports.map((r) => r.status)).toEqual(Array(SESSIONS).fill("ok"));
    expect(reports.map((r) => resultOf(r))).toEqual(Array.from({ length: SESSIONS }, (_, i) => String(i * 2)));
    const { starts, spares } = host.workbenches;
    expect(starts.peak).toBeLessThanOrEqual(2);
    expect(starts.queued).toBe(0);
    // Each session has its own live worker (taken spares included).
    const pids = new Set(Array.from({ length: SESSIONS }, (_, i) => host.workbenches.get(`burst-${i}`)!.worker!.pid));
    expect(pids.size).toBe(SESSIONS);
    expect(spares.taken).toBeLessThanOrEqual(SESSIONS);
  }, 120_000);

  it("culled generations give back every descriptor: a second round of the same sessions holds no more than the first", async () => {
    const started = await startTestHost({ spares: 0, idleTimeoutMs: 3600_000 });
    close = started.close;
    const { host } = started;
    const round = async (n: number) => {
      const reports = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => host.execute("1+1", `fd-${i}`)));
      expect(reports.map((r) => r.status)).toEqual(Array(SESSIONS).fill("ok"));
      expect(new Set(reports.map((r) => r.generation))).toEqual(new Set([`g-${n}`]));
      const live = openFds();
      const pids = await cullAll(host);
      for (const pid of pids) for (let i = 0; i < 500 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 10));
      expect(pids.filter(isAlive)).toEqual([]);
      return { live, culled: openFds() };
    };
    const first = await round(1);
    const second = await round(2);
    const third = await round(3);
    // A live workbench holds descriptors in the host; a culled one holds none, however often it came back.
    expect(first.live).toBeGreaterThan(first.culled);
    expect(second.culled).toBeLessThanOrEqual(first.culled);
    expect(third.culled).toBeLessThanOrEqual(first.culled);
    expect(third.live).toBeLessThanOrEqual(first.live);
    expect(host.culler!.culled).toBe(3 * SESSIONS + 1);
  }, 180_000);
});
