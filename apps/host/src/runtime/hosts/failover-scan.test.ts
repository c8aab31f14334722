// The failover scan's fair share (C21): two survivors split a dead host's 100 sessions, none over
// 70, also when one of them scans several times before the other and while the dead host still
// looks alive (its heartbeat is fresh for up to a lease). An in-memory lease store; claims yield,
// so scans running at once interleave.
import { describe, expect, test } from "vitest";
import type { Lease, LeaseStore } from "../../store/leases";
import { FailoverScan, fairShare } from "./failover-scan";

const LEASE_MS = 2_000;

/** 100 sessions with pending work and no live lease; hosts dead, b and c, heartbeats settable. */
function world() {
  const heartbeat: Record<string, number> = { dead: 0, b: 0, c: 0 };
  const holder = new Map<string, string>();
  const sessions = Array.from({ length: 100 }, (_, i) => `s${i}`);
  let now = 0;
  const store = {
    overview: async () => ({
      nowMs: now,
      hosts: Object.entries(heartbeat).map(([hostId, at]) => ({ hostId, address: null, startedAtMs: 0, heartbeatAtMs: at })),
      leases: [...holder].map(([sessionId, hostId]): Lease => ({ sessionId, hostId, epoch: 1, expiresAtMs: now + LEASE_MS })),
    }),
    pending: async () => sessions.filter((s) => !holder.has(s)),
  } as unknown as LeaseStore<unknown>;
  const scan = (hostId: string) =>
    new FailoverScan({
      store,
      hostId,
      leaseMs: LEASE_MS,
      now: () => now,
      claim: async (sessionId) => {
        await new Promise((r) => setImmediate(r));
        if (holder.has(sessionId)) return false;
        holder.set(sessionId, hostId);
        return true;
      },
    });
  const held = (hostId: string) => [...holder.values()].filter((h) => h === hostId).length;
  return { heartbeat, holder, scan, held, setNow: (ms: number) => (now = ms) };
}

describe("failover scan fair share", () => {
  test("one survivor scanning three times while the dead host still looks alive takes a third, then half once it is gone", async () => {
    const w = world();
    const b = w.scan("b");
    for (let i = 0; i < 3; i++) await b.once();
    expect(w.held("b")).toBe(35); // ceil(100 / 3) + 1: the dead host counted, b's own leases too
    w.setNow(LEASE_MS + 1); // the dead host's heartbeat is a lease old; b and c heartbeat
    w.heartbeat.b = w.heartbeat.c = LEASE_MS;
    for (let i = 0; i < 3; i++) await b.once();
    expect(w.held("b")).toBe(51);
    await w.scan("c").once();
    expect(w.held("c")).toBe(49);
    expect(w.holder.size).toBe(100);
  });

  test("two survivors scanning at once interleave by batches: all 100 carried, neither over 70", async () => {
    const w = world();
    w.setNow(LEASE_MS + 1);
    w.heartbeat.b = w.heartbeat.c = LEASE_MS;
    const [b, c] = [w.scan("b"), w.scan("c")];
    await Promise.all([b.once(), c.once()]);
    await Promise.all([b.once(), c.once()]);
    expect(w.holder.size).toBe(100);
    expect(w.held("b")).toBeLessThanOrEqual(70);
    expect(w.held("c")).toBeLessThanOrEqual(70);
    expect(w.held("b") + w.held("c")).toBe(100);
  });

  test("the share counts the live load: a host that holds its part already takes none of the rest", () => {
    expect(fairShare(100, 2)).toBe(51);
    expect(fairShare(50, 2, 50, 50)).toBe(1);
    expect(fairShare(50, 2, 50, 0)).toBe(51);
    expect(fairShare(10, 3, 0, 0)).toBe(5);
  });
});
