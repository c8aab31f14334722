import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { postgresMissing, startPostgres, testDatabase, type TestPostgres } from "../../../test-support/postgres";
import { isConnectionError, migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import * as pgSchema from "../src/db/pg-schema";
import { isLeaseLost, pgLeases, withLease, type Lease, type LeaseKey } from "../src/store/leases";

// PostgreSQL only: what row locks and a server restart do, which SQLite has no counterpart of.

const event = (sessionId: string, text: string) => ({ sessionId, lane: "operator", direction: "in" as const, source: "test", receivedAtMs: 0, payload: { text } });
const key = (l: Lease): LeaseKey => ({ sessionId: l.sessionId, hostId: l.hostId, epoch: l.epoch });
const events = async (host: PgHost, sessionId: string) => (await host.db.select({ n: count() }).from(pgSchema.events).where(eq(pgSchema.events.sessionId, sessionId)))[0]!.n;

/** Resolves when `done` holds; the deadline only catches a hang. */
async function until(done: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after 30 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe("a fenced write holds the lease row FOR SHARE", () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  let a: PgHost;
  let b: PgHost;
  beforeAll(async () => {
    db = await testDatabase();
    if (db.skip) return;
    a = openPostgres(db.url!, { max: 2 });
    b = openPostgres(db.url!, { max: 2 });
    await migratePostgres(a.pool);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.stop();
  });

  test("a claim of the expired lease waits for the open fenced write to commit, so no write commits after the epoch moved", async (ctx) => {
    if (db.skip) return ctx.skip(db.skip);
    const [la, lb] = [pgLeases(a.db), pgLeases(b.db)];
    const s = `forshare-${process.pid}`;
    const held = (await la.claim(s, "h0", 300))!;
    const checked = gate();
    const proceed = gate();
    const order: string[] = [];
    const write = withLease(la, key(held), async (tx) => {
      checked.open();
      await proceed.opened;
      await tx.insert(pgSchema.events).values(event(s, "in flight"));
    }).then(() => order.push("write committed"));
    await checked.opened;
    // The lease expires while the write's transaction is open (by the database's clock).
    await until(async () => (await b.pool.query("SELECT expires_at_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint AS gone FROM leases WHERE session_id = $1", [s])).rows[0].gone, "expired");
    const claim = lb.claim(s, "h1", 60_000).then((l) => (order.push("claimed"), l));
    await until(async () => (await b.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'insert into \"leases\"%'")).rows[0].n === 1, "claim waiting on the row lock");
    expect(order).toEqual([]);
    proceed.open();
    const taken = await claim;
    await write; // committed, not LEASE_LOST: the claim could not move the epoch under it
    // Both replies race back on two connections, so the order the client sees them in says nothing;
    // the database's order is pinned above (the claim sat on the row lock while the write was open).
    expect(order.sort()).toEqual(["claimed", "write committed"]);
    expect(taken).toMatchObject({ hostId: "h1", epoch: 2 });
    // The new holder reads what the old one committed before it took over.
    expect(await events(b, s)).toBe(1);
    expect(isLeaseLost(await withLease(la, key(held), async () => {}).catch((e: unknown) => e))).toBe(true);
  });
});

describe("PostgreSQL restarted under a host", () => {
  const missing = postgresMissing();
  let pg: TestPostgres | null = null;
  let host: PgHost;
  const dropped: Error[] = [];
  beforeAll(async () => {
    if (missing) {
      if (process.env.CI) throw new Error(`CI: PostgreSQL must run for the multi-host tests: ${missing}`);
      return;
    }
    pg = await startPostgres(); // its own cluster: restarting the run's would cut the other files' connections
    host = openPostgres(pg.createDatabase(), { max: 4, onError: (e) => dropped.push(e) });
    await migratePostgres(host.pool);
  });
  afterAll(async () => {
    await host?.close();
    await pg?.stop();
  });

  test("pg_ctl restart: the pool's dropped connections are reported, not thrown, and the next statements run on new connections", async (ctx) => {
    if (!pg) return ctx.skip(missing!);
    const leases = pgLeases(host.db);
    const s = `restart-${process.pid}`;
    const held = (await leases.claim(s, "h0", 60_000))!;
    // Several idle connections, so the restart has more than one to cut.
    await Promise.all([1, 2, 3].map(() => host.pool.query("SELECT pg_sleep(0.05)")));
    const before = pg.pid();
    await pg.restart();
    expect(pg.pid()).not.toBe(before);
    expect(dropped.length).toBeGreaterThan(0);
    expect(dropped.every(isConnectionError)).toBe(true);
    // The lease lives in the database, so it survived: renewing it is the first statement after.
    expect(await leases.renew(key(held), 60_000)).toMatchObject({ epoch: 1 });
    await withLease(leases, key(held), async (tx) => void (await tx.insert(pgSchema.events).values(event(s, "after restart"))));
    expect(await events(host, s)).toBe(1);
  });

  test("a restart in the middle of a fenced write: that write fails with a connection error (not LEASE_LOST), nothing of it lands; retried, it lands once", async (ctx) => {
    if (!pg) return ctx.skip(missing!);
    const leases = pgLeases(host.db);
    const s = `restart-mid-${process.pid}`;
    const held = (await leases.claim(s, "h0", 60_000))!;
    const inside = gate();
    const proceed = gate();
    const write = (text: string, wait: boolean) =>
      withLease(leases, key(held), async (tx) => {
        if (wait) {
          inside.open();
          await proceed.opened;
        }
        await tx.insert(pgSchema.events).values(event(s, text));
      });
    const cut = write("cut", true).catch((e: unknown) => e);
    await inside.opened;
    await pg.restart();
    proceed.open();
    const error = await cut;
    expect(isLeaseLost(error)).toBe(false);
    expect(isConnectionError(error)).toBe(true);
    expect(await events(host, s)).toBe(0);
    await write("retried", false);
    expect(await events(host, s)).toBe(1);
  });
});
