// SessionLeases (C21) over a real lease store, on both dialects: claim, renewal, the deadline that
// stops a session before its lease can expire elsewhere, LEASE_LOST, a restart taking its own
// leases back, SESSION_HELD_ELSEWHERE. Times are bounds polled with a deadline, never sleeps that pass either way.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import { killMarginMs, SessionLeases, type LossReason } from "../src/runtime/hosts/session-leases";
import { pgLeases, sqliteLeases, type LeaseStore } from "../src/store/leases";
import { tempDir } from "./helpers";
import { within } from "./hosts-support";

type Store = LeaseStore<unknown>;

let pgDb: Awaited<ReturnType<typeof testDatabase>>;
beforeAll(async () => {
  pgDb = await testDatabase();
});
afterAll(async () => {
  await pgDb?.stop();
});

async function sqliteStores(n: number): Promise<{ stores: Store[]; close(): Promise<void> }> {
  const dir = tempDir();
  const conns = Array.from({ length: n }, () => openSqlite(join(dir, "klbr.sqlite")));
  const stores = conns.map((c) => sqliteLeases(migrateHostDb(c), c) as Store);
  return { stores, close: async () => (conns.forEach((c) => c.close()), rmSync(dir, { recursive: true, force: true })) };
}

async function pgStores(url: string, n: number): Promise<{ stores: Store[]; close(): Promise<void> }> {
  const pools: PgHost[] = Array.from({ length: n }, () => openPostgres(url, { max: 2 }));
  await migratePostgres(pools[0]!.pool);
  return { stores: pools.map((p) => pgLeases(p.db) as Store), close: async () => void (await Promise.all(pools.map((p) => p.close()))) };
}

let n = 0;
const sid = () => `sl-${process.pid}-${++n}`;

/** A SessionLeases whose losses are recorded, over `store` (optionally wrapped). */
function leases(store: Store, hostId: string, leaseMs: number, extra: { clock?: () => number; resume?: (l: unknown, p: { hostId: string | null }) => Promise<void> } = {}) {
  const losses: Array<{ sessionId: string; why: LossReason; at: number }> = [];
  const l = new SessionLeases({ store, hostId, leaseMs, stop: (sessionId, why) => losses.push({ sessionId, why, at: Date.now() }), ...extra } as ConstructorParameters<typeof SessionLeases>[0]);
  return { l, losses };
}

describe.each(["sqlite", "postgres"] as const)("SessionLeases on %s", (dialect) => {
  let db: { stores: Store[]; close(): Promise<void> };
  const skip = () => (dialect === "postgres" ? pgDb.skip : null);
  beforeAll(async () => {
    if (skip()) return;
    db = dialect === "sqlite" ? await sqliteStores(2) : await pgStores(pgDb.url!, 2);
  });
  afterAll(async () => {
    await db?.close();
  });

  test("renewal keeps a lease past several durations; another host is refused with SESSION_HELD_ELSEWHERE naming the holder", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const [sa, sb] = db.stores as [Store, Store];
    await sa.register("ha", "/run/ha.sock");
    const { l: a, losses } = leases(sa, "ha", 600);
    const { l: b } = leases(sb, "hb", 600);
    a.start();
    const s = sid();
    const key = await a.hold(s);
    expect(key).toEqual({ sessionId: s, hostId: "ha", epoch: 1 });
    const start = Date.now();
    // Three lease durations: only renewals keep it (a lapse would let b claim it).
    while (Date.now() - start < 1_800) {
      expect(await b.tryHold(s)).toBeNull();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(losses).toEqual([]);
    expect(await sb.lease(s)).toMatchObject({ hostId: "ha", epoch: 1 });
    await expect(b.hold(s)).rejects.toMatchObject({ code: "SESSION_HELD_ELSEWHERE", message: expect.stringContaining("host ha (/run/ha.sock) at epoch 1") });
    await a.stop();
    // A clean stop releases: b claims at once, at the next epoch.
    expect(await b.hold(s)).toEqual({ sessionId: s, hostId: "hb", epoch: 2 });
    await b.stop();
  });

  test("renewals failing: the session is stopped before its lease can expire (a deadline timer), and keyFor gives the lost key", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const [sa, sb] = db.stores as [Store, Store];
    let down = false;
    const flaky: Store = { ...sa, renew: (k, ms) => (down ? Promise.reject(new Error("database away")) : sa.renew(k, ms)) };
    const leaseMs = 1_000;
    const { l: a, losses } = leases(flaky, "ha", leaseMs);
    a.start();
    const s = sid();
    const key = await a.hold(s);
    down = true;
    const cut = Date.now();
    expect(await within(leaseMs * 2, () => losses.length > 0)).toBe(true);
    expect(losses[0]).toMatchObject({ sessionId: s, why: "renew_deadline" });
    // Stopped while the lease still stood: nobody else could have claimed it yet.
    const { l: b } = leases(sb, "hb", leaseMs);
    expect(await b.tryHold(s)).toBeNull();
    expect(losses[0]!.at - cut).toBeLessThanOrEqual(leaseMs - killMarginMs(leaseMs) + 100);
    expect(a.holds(s)).toBe(false);
    expect(a.keyFor(s)).toEqual(key);
    // Once it expires, another host takes it at a new epoch; the lost key never matches again.
    expect(await within(leaseMs * 2, async () => (await b.tryHold(s)) !== null)).toBe(true);
    expect(await sb.lease(s)).toMatchObject({ hostId: "hb", epoch: 2 });
    await a.stop();
    await b.stop();
  });

  test("a clock that jumped past the deadline (SIGSTOP): the first keyFor stops the session before any timer runs", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    let now = 0;
    const { l: a, losses } = leases(db.stores[0]!, "ha", 10_000, { clock: () => now });
    const s = sid();
    const key = await a.hold(s);
    expect(a.keyFor(s)).toEqual(key);
    expect(losses).toEqual([]);
    now = 10_000 - killMarginMs(10_000);
    expect(a.keyFor(s)).toEqual(key);
    expect(losses).toMatchObject([{ sessionId: s, why: "renew_deadline" }]);
    expect(a.holds(s)).toBe(false);
    await a.stop();
  });

  test("LEASE_LOST from a write stops the session once; a later claim by this host comes back at a new epoch and is resumed", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const resumed: Array<{ hostId: string | null }> = [];
    const { l: a, losses } = leases(db.stores[0]!, "ha", 5_000, { resume: async (_l, p) => void resumed.push(p) });
    const s = sid();
    const key = await a.hold(s);
    a.lostBy({ ...key, epoch: key.epoch + 7 }, "another epoch's loss is not this one");
    expect(losses).toEqual([]);
    a.lostBy(key, "a fenced write found the lease gone");
    a.lostBy(key, "twice");
    expect(losses).toMatchObject([{ sessionId: s, why: "lease_lost" }]);
    // Its own live lease (this process lost it, nobody else took it): taken back, epoch + 1.
    const again = await a.hold(s);
    expect(again.epoch).toBe(key.epoch + 1);
    expect(resumed).toMatchObject([{ hostId: "ha" }]);
    await a.stop();
  });

  test("a restarted host (same host id, new process) takes its unexpired leases back at once and resumes them", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const { l: before } = leases(db.stores[0]!, "hr", 60_000);
    const s = sid();
    const old = await before.hold(s);
    // kill -9: no release.
    const resumed: Array<{ hostId: string | null; epoch: number }> = [];
    const { l: after } = leases(db.stores[1]!, "hr", 60_000, { resume: async (_l, p) => void resumed.push(p as never) });
    expect(await after.hold(s)).toEqual({ sessionId: s, hostId: "hr", epoch: old.epoch + 1 });
    expect(resumed).toMatchObject([{ hostId: "hr", epoch: old.epoch }]);
    // The dead process's key is fenced off: its renewal is refused.
    expect(await db.stores[0]!.renew(old, 60_000)).toBeNull();
    await after.stop();
  });
});
