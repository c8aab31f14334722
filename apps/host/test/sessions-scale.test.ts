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

  it("a stop with starts queued spawns none of them: each queued cell fails HOST_STOPPING, none hangs", async () => {
    const started = await startTestHost({ startConcurrency: 1, spares: 0 });
    const { host } = started;
    close = async () => {
      if (!host.stopping) await host.stop();
      await started.close();
    };
    const { starts } = host.workbenches;
    const cold = host.workbenches.coldStarts;
    const cells = Array.from({ length: SESSIONS }, (_, i) => host.execute("1+1", `queued-${i}`).then((r) => r.status, (e: Error & { code?: string }) => e.code ?? e.message));
    // One start holds the only turn; the others wait behind it.
    for (let i = 0; i < 1500 && starts.queued < SESSIONS - 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(starts.queued).toBe(SESSIONS - 1);
    await host.stop();
    const outcomes = await Promise.all(cells);
    expect(outcomes.filter((o) => o !== "HOST_STOPPING" && o !== "ok")).toEqual([]);
    expect(outcomes.filter((o) => o === "HOST_STOPPING").length).toBeGreaterThanOrEqual(SESSIONS - 1);
    // Only the start that held the turn when the stop came ever spawned.
    expect(host.workbenches.coldStarts - cold).toBeLessThanOrEqual(1);
    expect(starts.queued).toBe(0);
  }, 120_000);
});
