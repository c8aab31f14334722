// C21 "PostgreSQL restarted mid-turn: hosts reconnect, nothing lost", at the store's transaction
// runner: a real cluster restarted with pg_ctl under an open pool, a transaction cut in its body,
// a COMMIT whose reply is lost (a socket relay that drops the connection instead of passing the
// server's COMMIT reply), and a server that never comes back (a bounded wait, then a coded error).
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { postgresMissing, startPostgres, type TestPostgres } from "../../../test-support/postgres";
import { migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import * as pgSchema from "../src/db/pg-schema";
import { pgLeases } from "../src/store/leases";
import { pgRead, pgTransaction } from "../src/store/pg/tx";

const missing = postgresMissing();
let pg: TestPostgres | null = null;
let url = "";
let host: PgHost;
beforeAll(async () => {
  if (missing) {
    if (process.env.CI) throw new Error(`CI: PostgreSQL must run for the multi-host tests: ${missing}`);
    return;
  }
  pg = await startPostgres(); // its own cluster: restarting the run's would cut other files' connections
  url = pg.createDatabase();
  host = openPostgres(url, { max: 4 });
  await migratePostgres(host.pool);
});
afterAll(async () => {
  await host?.close();
  await pg?.stop();
});

const event = (sessionId: string, text: string) => ({ sessionId, lane: "operator", direction: "in" as const, source: "test", receivedAtMs: 0, payload: { text } });
const countOf = async (db: PgHost["db"], sessionId: string) => (await db.select({ n: count() }).from(pgSchema.events).where(eq(pgSchema.events.sessionId, sessionId)))[0]!.n;

function gate(): { open(): void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

test("after pg_ctl restart the next fenced write and read succeed on new connections", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  const s = `rc-next-${process.pid}`;
  const lease = (await pgLeases(host.db).claim(s, "h0", 60_000))!;
  await pgTransaction(host.pool, lease, async (tx) => void (await tx.insert(pgSchema.events).values(event(s, "before"))));
  // Every pooled connection is idle and about to be cut.
  await Promise.all([1, 2, 3].map(() => host.pool.query("SELECT pg_sleep(0.02)")));
  const before = pg.pid();
  await pg.restart();
  expect(pg.pid()).not.toBe(before);
  for (let i = 0; i < 5; i++) await pgTransaction(host.pool, lease, async (tx) => void (await tx.insert(pgSchema.events).values(event(s, `after ${i}`))));
  expect(await pgRead(() => countOf(host.db, s))).toBe(6);
});

test("a restart while a transaction is open: it runs again on a new connection and lands once", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  const s = `rc-mid-${process.pid}`;
  const lease = (await pgLeases(host.db).claim(s, "h0", 60_000))!;
  const inside = gate();
  const proceed = gate();
  let runs = 0;
  const write = pgTransaction(host.pool, lease, async (tx) => {
    runs++;
    await tx.insert(pgSchema.events).values(event(s, "one"));
    if (runs === 1) {
      inside.open();
      await proceed.opened;
    }
    await tx.insert(pgSchema.events).values(event(s, "two"));
    return runs;
  });
  await inside.opened;
  // While the restart runs, the retry finds no server (socket gone, or starting up): it keeps trying.
  await pg.restart();
  proceed.open();
  expect(await write).toBe(2);
  expect(await countOf(host.db, s)).toBe(2);
});

test("a restart during a read: the read is asked again and answers", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  let tries = 0;
  const read = pgRead(async () => {
    tries++;
    const { rows } = await host.pool.query<{ n: number }>("SELECT 7 AS n, pg_sleep($1)", [tries === 1 ? 30 : 0]);
    return rows[0]!.n;
  });
  // The first try sleeps in the server until the restart cuts it.
  const deadline = Date.now() + 10_000;
  while (tries === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  await pg.restart();
  expect(await read).toBe(7);
  // The cut try, then as many as the restart took (no server yet, or one starting up), then the answer.
  expect(tries).toBeGreaterThanOrEqual(2);
});

/**
 * A relay between the pool and the cluster's socket. Armed, it drops both connections instead of
 * passing the server's reply to COMMIT (a CommandComplete 'C' message tagged "COMMIT"), after the
 * server has committed: the client cannot know whether its transaction landed.
 */
async function commitCutter(target: string): Promise<{ dir: string; arm(): void; cuts: number; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "klbr-relay-"));
  const sockets = new Set<Socket>();
  const state = { armed: false, cuts: 0 };
  const commitTag = Buffer.concat([Buffer.from("C"), Buffer.from([0, 0, 0, 11]), Buffer.from("COMMIT\0")]);
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.on("data", (chunk: Buffer) => {
      if (state.armed && chunk.includes(commitTag)) {
        state.armed = false;
        state.cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => (client.destroy(), upstream.destroy());
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(join(dir, ".s.PGSQL.5432"), resolve));
  return {
    dir,
    arm: () => void (state.armed = true),
    get cuts() {
      return state.cuts;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test("a COMMIT whose reply is lost after the server committed: its transaction id says so, it is not run again", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  const relay = await commitCutter(join(pg.dir, ".s.PGSQL.5432"));
  const database = new URL(url).pathname.slice(1);
  const relayed = openPostgres(`postgresql://${pg.user}@localhost:5432/${database}?host=${encodeURIComponent(relay.dir)}`, { max: 2 });
  try {
    const s = `rc-commit-${process.pid}`;
    const lease = (await pgLeases(relayed.db).claim(s, "h0", 60_000))!;
    let runs = 0;
    relay.arm();
    const result = await pgTransaction(relayed.pool, lease, async (tx) => {
      runs++;
      await tx.insert(pgSchema.events).values(event(s, "exactly once"));
      return "done";
    });
    expect(relay.cuts).toBe(1);
    expect(result).toBe("done");
    expect(runs).toBe(1);
    expect(await countOf(host.db, s)).toBe(1);
  } finally {
    await relayed.close();
    await relay.close();
  }
});

test("a server that does not come back: DATABASE_UNAVAILABLE after the bounded wait, for writes and reads", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  const nowhere = mkdtempSync(join(tmpdir(), "klbr-nopg-"));
  const gone = openPostgres(`postgresql://klbr@localhost:5432/x?host=${encodeURIComponent(nowhere)}`, { max: 1 });
  const policy = { deadlineMs: 400, pauseMs: 20, maxPauseMs: 100 };
  try {
    const started = Date.now();
    const error = await pgTransaction(gone.pool, null, async () => "never", policy).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    expect((error as Error).message).toMatch(/did not answer/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await pgRead(() => gone.pool.query("SELECT 1"), policy).catch((e: unknown) => e)).toMatchObject({ code: "DATABASE_UNAVAILABLE" });
  } finally {
    await gone.close();
    rmSync(nowhere, { recursive: true, force: true });
  }
});

test("a statement error is not a connection error: it is thrown at once, not retried", async (ctx) => {
  if (!pg) return ctx.skip(missing!);
  let runs = 0;
  const error = await pgTransaction(host.pool, null, async (tx) => {
    runs++;
    await tx.execute("SELECT * FROM no_such_table" as never);
  }).catch((e: unknown) => e);
  expect(runs).toBe(1);
  expect(JSON.stringify((error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code)).toContain("42P01");
});
