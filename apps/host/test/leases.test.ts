import { rmSync } from "node:fs";
import { join } from "node:path";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite, type HostDb } from "../src/db/open";
import { migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import * as pgSchema from "../src/db/pg-schema";
import * as schema from "../src/db/schema";
import { isLeaseLost, pgLeases, sqliteLeases, withLease, type LeaseKey, type LeaseStore, type PgTx } from "../src/store/leases";
import { tempDir } from "./helpers";

/** What a suite needs of one dialect: N hosts' lease stores over one database, a fenced insert, a count. */
interface Dialect {
  hosts: Array<LeaseStore<never>>;
  /** One event insert on a fenced write's transaction. */
  insert(tx: never, sessionId: string, text: string): Promise<void>;
  /** One fenced event insert under `key` on host `i`. */
  write(i: number, key: LeaseKey, text: string): Promise<void>;
  /** Events of a session in the database. */
  events(sessionId: string): Promise<number>;
  close(): Promise<void>;
}

const event = (sessionId: string, text: string) => ({ sessionId, lane: "operator", direction: "in" as const, source: "test", receivedAtMs: 0, payload: { text } });

async function postgresDialect(url: string, n: number): Promise<Dialect> {
  // One pool per host, as separate hosts have: their statements race on separate connections.
  const pools: PgHost[] = Array.from({ length: n }, () => openPostgres(url, { max: 4 }));
  await migratePostgres(pools[0]!.pool);
  const hosts = pools.map((p) => pgLeases(p.db));
  const insert = async (tx: PgTx, sessionId: string, text: string) => void (await tx.insert(pgSchema.events).values(event(sessionId, text)));
  return {
    hosts: hosts as Array<LeaseStore<never>>,
    insert: insert as Dialect["insert"],
    write: (i, key, text) => withLease(hosts[i]!, key, (tx) => insert(tx, key.sessionId, text)),
    events: async (sessionId) => (await pools[0]!.db.select({ n: count() }).from(pgSchema.events).where(eq(pgSchema.events.sessionId, sessionId)))[0]!.n,
    close: async () => void (await Promise.all(pools.map((p) => p.close()))),
  };
}

async function sqliteDialect(n: number): Promise<Dialect> {
  // Separate connections on one file: a second process on the same data directory.
  const dir = tempDir();
  const file = join(dir, "klbr.sqlite");
  const conns = Array.from({ length: n }, () => openSqlite(file));
  const dbs = conns.map((c) => migrateHostDb(c));
  const hosts = dbs.map((db, i) => sqliteLeases(db, conns[i]!));
  const insert = async (tx: HostDb, sessionId: string, text: string) => void tx.insert(schema.events).values(event(sessionId, text)).run();
  return {
    hosts: hosts as Array<LeaseStore<never>>,
    insert: insert as Dialect["insert"],
    write: (i, key, text) => withLease(hosts[i]!, key, (tx) => insert(tx, key.sessionId, text)),
    events: async (sessionId) => dbs[0]!.select({ n: count() }).from(schema.events).where(eq(schema.events.sessionId, sessionId)).get()!.n,
    close: async () => {
      for (const c of conns) c.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let pgDb: Awaited<ReturnType<typeof testDatabase>>;
beforeAll(async () => {
  pgDb = await testDatabase();
});
afterAll(async () => {
  await pgDb?.stop();
});

let sessions = 0;
const session = () => `s-${process.pid}-${++sessions}`;
const key = (l: { sessionId: string; hostId: string; epoch: number }): LeaseKey => ({ sessionId: l.sessionId, hostId: l.hostId, epoch: l.epoch });

describe.each([
  ["postgres", (n: number) => postgresDialect(pgDb.url!, n)],
  ["sqlite", (n: number) => sqliteDialect(n)],
] as const)("leases on %s", (name, open) => {
  let d: Dialect;
  beforeAll(async () => {
    if (name === "postgres" && pgDb.skip) return;
    d = await open(3);
    await Promise.all(d.hosts.map((h, i) => h.register(`h${i}`, `/run/h${i}.sock`)));
  });
  afterAll(async () => {
    await d?.close();
  });
  const skip = () => (name === "postgres" ? pgDb.skip : null);

  test("register and heartbeat: every host listed, a heartbeat moves only its own row", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const before = await d.hosts[0]!.hosts();
    expect(before.map((h) => h.hostId).sort()).toEqual(["h0", "h1", "h2"]);
    expect(before.find((h) => h.hostId === "h1")!.address).toBe("/run/h1.sock");
    expect(await d.hosts[1]!.heartbeat("h1")).toBe(true);
    expect(await d.hosts[1]!.heartbeat("nobody")).toBe(false);
    const after = await d.hosts[2]!.hosts();
    const at = (rows: typeof after, id: string) => rows.find((h) => h.hostId === id)!.heartbeatAtMs;
    expect(at(after, "h1")).toBeGreaterThanOrEqual(at(before, "h1"));
    expect(at(after, "h0")).toBe(at(before, "h0"));
  });

  test("claim, renew and release: a held lease is refused to others; renew only by the holder with its epoch; release frees it, the epoch grows", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const [a, b] = d.hosts as [LeaseStore<never>, LeaseStore<never>];
    const s = session();
    const held = (await a.claim(s, "h0", 60_000))!;
    expect(held).toMatchObject({ sessionId: s, hostId: "h0", epoch: 1 });
    expect(await b.claim(s, "h1", 60_000)).toBeNull();
    expect(await a.claim(s, "h0", 60_000)).toBeNull(); // the holder renews; a claim would bump its own epoch
    expect(await b.renew({ sessionId: s, hostId: "h1", epoch: 1 }, 60_000)).toBeNull(); // non-holder
    expect(await b.renew({ sessionId: s, hostId: "h0", epoch: 0 }, 60_000)).toBeNull(); // the holder's name, a stale epoch
    const renewed = (await a.renew(key(held), 120_000))!;
    expect(renewed.epoch).toBe(1);
    expect(renewed.expiresAtMs).toBeGreaterThan(held.expiresAtMs);
    expect(await b.release({ sessionId: s, hostId: "h1", epoch: 1 })).toBe(false);
    expect(await a.release(key(held))).toBe(true);
    expect(await a.lease(s)).toMatchObject({ hostId: null, epoch: 1 });
    expect(await a.renew(key(held), 60_000)).toBeNull(); // released: renewing is over
    expect(await b.claim(s, "h1", 60_000)).toMatchObject({ hostId: "h1", epoch: 2 });
  });

  test("an expired lease cannot be renewed, only claimed again (epoch + 1)", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const [a] = d.hosts as [LeaseStore<never>];
    const s = session();
    const held = (await a.claim(s, "h0", 0))!; // expires the moment it is taken
    expect(await a.renew(key(held), 60_000)).toBeNull();
    expect(await a.claim(s, "h0", 60_000)).toMatchObject({ hostId: "h0", epoch: 2 });
  });

  test("hosts racing to claim one expired lease 200 times: exactly one wins each time, the epoch one more each time", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const s = session();
    let epoch = 0;
    for (let round = 0; round < 200; round++) {
      const results = await Promise.all(d.hosts.map((h, i) => h.claim(s, `h${i}`, 60_000)));
      const winners = results.filter((r) => r !== null);
      expect(winners, `round ${round}`).toHaveLength(1);
      expect(winners[0]!.epoch).toBe(++epoch);
      // The winner stops renewing: its lease expires now, and the next round races for it.
      const i = results.findIndex((r) => r !== null);
      expect(await d.hosts[i]!.renew(key(winners[0]!), 0)).not.toBeNull();
    }
    expect((await d.hosts[0]!.lease(s))!.epoch).toBe(200);
  });

  test("hosts racing for a session never claimed (the insert path): exactly one wins, 50 times", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    for (let round = 0; round < 50; round++) {
      const s = session();
      const results = await Promise.all(d.hosts.map((h, i) => h.claim(s, `h${i}`, 60_000)));
      expect(results.filter((r) => r !== null).map((r) => r!.epoch)).toEqual([1]);
    }
  });

  test("a stale holder's fenced write after another host claimed: LEASE_LOST and nothing written; the new holder's write lands", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const s = session();
    const first = (await d.hosts[0]!.claim(s, "h0", 60_000))!;
    await d.write(0, key(first), "under epoch 1");
    expect(await d.hosts[0]!.renew(key(first), 0)).not.toBeNull(); // h0 stalls past its lease
    const second = (await d.hosts[1]!.claim(s, "h1", 60_000))!;
    expect(second.epoch).toBe(2);
    const stale = await d.write(0, key(first), "stale").catch((e: unknown) => e);
    expect(isLeaseLost(stale)).toBe(true);
    expect((stale as Error).message).toContain("held by h1 at epoch 2");
    await d.write(1, key(second), "under epoch 2");
    expect(await d.events(s)).toBe(2);
  });

  test("a fenced write past its lease's expiry is LEASE_LOST even before anyone claims it", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const s = session();
    const held = (await d.hosts[0]!.claim(s, "h0", 0))!;
    const error = await d.write(0, key(held), "late").catch((e: unknown) => e);
    expect(isLeaseLost(error)).toBe(true);
    expect((error as Error).message).toContain("(expired)");
    expect(await d.events(s)).toBe(0);
  });

  test("a write for a session nobody claimed is LEASE_LOST; an error in fn rolls its writes back", async (ctx) => {
    if (skip()) return ctx.skip(skip()!);
    const s = session();
    expect(isLeaseLost(await d.write(0, { sessionId: s, hostId: "h0", epoch: 1 }, "x").catch((e: unknown) => e))).toBe(true);
    const held = (await d.hosts[0]!.claim(s, "h0", 60_000))!;
    const boom = await withLease(d.hosts[0]!, key(held), async (tx) => {
      await d.insert(tx, s, "rolled back");
      throw new Error("boom");
    }).catch((e: unknown) => e);
    expect((boom as Error).message).toBe("boom");
    expect(await d.events(s)).toBe(0);
  });
});
