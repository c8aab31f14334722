// The async activation store contract (C21): the same cases against the SQLite adapter (the
// @klbr/activation store on a migrated host file) and the PostgreSQL store (a migrated database of
// the run's cluster). Each subject has two stores on two connections (pools), as two hosts have,
// so a race between them is a race between database sessions, not between calls on one handle.
import Database from "better-sqlite3";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isActivationError, openActivationStore, snapshotRelease, type Release } from "@klbr/activation";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { testDatabase } from "../../../test-support/postgres";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { migratePostgres, openPostgres, type PgHost } from "../src/db/pg-open";
import { HostError } from "../src/errors";
import { blobDigest } from "../src/store/blobs";
import type { AsyncActivationStore } from "../src/store/activation/api";
import { materialiseRelease } from "../src/store/activation/materialise";
import { pgActivationStore } from "../src/store/activation/pg";
import { sqliteActivationStore } from "../src/store/activation/sqlite";
import { removeTree, tempDir } from "./helpers";

interface Subject {
  /** Two stores on one database, each on its own connection. */
  stores: [AsyncActivationStore, AsyncActivationStore];
  /** Empty the epoch store (each test starts before the first activation). */
  reset(): Promise<void>;
  /** Rows in `blobs` with this digest. */
  blobRows(digest: string): Promise<number>;
  /** Overwrite a blob's bytes behind the store's back (a damaged database). */
  tamperBlob(digest: string, data: Buffer): Promise<void>;
  close(): Promise<void>;
}

const dir = tempDir("klbr-activation-contract-");
let pgDb: Awaited<ReturnType<typeof testDatabase>>;
const subjects: Record<"sqlite" | "postgres", Subject | null> = { sqlite: null, postgres: null };

beforeAll(async () => {
  const file = join(dir, "klbr.sqlite");
  const connections = [openSqlite(file), openSqlite(file)] as const;
  const db = migrateHostDb(connections[0]);
  openActivationStore(connections[0]).migrate();
  const other = migrateHostDb(connections[1]);
  subjects.sqlite = {
    stores: [sqliteActivationStore(connections[0], db), sqliteActivationStore(connections[1], other)],
    reset: async () => void connections[0].exec("DELETE FROM activation_state; DELETE FROM activation_history;"),
    blobRows: async (digest) => connections[0].prepare("SELECT count(*) FROM blobs WHERE digest = ?").pluck().get(digest) as number,
    tamperBlob: async (digest, data) => void connections[0].prepare("UPDATE blobs SET data = ? WHERE digest = ?").run(data, digest),
    close: async () => connections.forEach((c: Database.Database) => c.close()),
  };
  pgDb = await testDatabase();
  if (pgDb.skip) return;
  const hosts: PgHost[] = [openPostgres(pgDb.url!, { max: 2 }), openPostgres(pgDb.url!, { max: 2 })];
  await migratePostgres(hosts[0]!.pool);
  subjects.postgres = {
    stores: [pgActivationStore(hosts[0]!), pgActivationStore(hosts[1]!)],
    reset: async () => void (await hosts[0]!.pool.query("TRUNCATE activation_state, activation_history RESTART IDENTITY")),
    blobRows: async (digest) => Number((await hosts[0]!.pool.query("SELECT count(*) AS n FROM blobs WHERE digest = $1", [digest])).rows[0].n),
    tamperBlob: async (digest, data) => void (await hosts[0]!.pool.query("UPDATE blobs SET data = $1 WHERE digest = $2", [data, digest])),
    close: async () => void (await Promise.all(hosts.map((h) => h.close()))),
  };
});
afterAll(async () => {
  await subjects.sqlite?.close();
  await subjects.postgres?.close();
  await pgDb?.stop();
  removeTree(dir);
});

let drafts = 0;
/** A release under the test's releases directory: a valid manifest, its two hooks, and `extra`. */
function release(extra: Record<string, string> = {}): Release {
  const draft = join(dir, `draft-${drafts++}`);
  mkdirSync(draft);
  const files: Record<string, string> = {
    "manifest.json": JSON.stringify({ version: 1, hooks: { "attention.plan": "pol.main:attention", "delivery.review": "pol.main:delivery" } }),
    "main.py": "def attention(r, c):\n    pass\n\ndef delivery(r, c):\n    pass\n",
    ...extra,
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(draft, name)), { recursive: true });
    writeFileSync(join(draft, name), text);
  }
  return snapshotRelease(draft, join(dir, "releases"));
}

const ok = async () => {};

async function failure(promise: Promise<unknown>): Promise<{ code: string; error: Error }> {
  try {
    await promise;
  } catch (error) {
    if (isActivationError(error) || error instanceof HostError) return { code: error.code, error };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe.each(["sqlite", "postgres"] as const)("activation store on %s", (dialect) => {
  const subject = (ctx: { skip(reason: string): never }): Subject => {
    const s = subjects[dialect];
    if (!s) return ctx.skip(pgDb.skip ?? "no store");
    return s;
  };
  beforeEach(async () => {
    await subjects[dialect]?.reset();
  });

  test("nothing active at first; epochs 1 then 2; a stale epoch conflicts; the history holds every attempt in order", async (ctx) => {
    const { stores: [store, other] } = subject(ctx);
    expect(await store.current()).toBeNull();
    const a = release({ "a.md": "a" });
    const first = await store.activate({ path: a.path, expectedEpoch: 0 }, ok);
    expect(first).toMatchObject({ epoch: 1, digest: a.digest, path: a.path });
    expect(await other.current()).toEqual(first);
    const b = release({ "b.md": "b" });
    expect(await other.activate({ path: b.path, expectedEpoch: 1 }, ok)).toMatchObject({ epoch: 2, digest: b.digest });
    const stale = await failure(store.activate({ path: a.path, expectedEpoch: 1 }, ok));
    expect(stale.code).toBe("ACTIVATION_EPOCH_CONFLICT");
    expect(stale.error.message).toBe("expected epoch 1 but the active epoch is 2; read current() and decide again");
    const refused = await failure(store.activate({ path: join(dir, "not-a-release"), expectedEpoch: 2 }, ok));
    expect(refused.code).toBe("RELEASE_BAD_NAME");
    const failed = await failure(store.activate({ path: a.path, expectedEpoch: 2 }, async () => { throw new Error("no hello"); }));
    expect(failed.code).toBe("ACTIVATION_HANDSHAKE_FAILED");
    expect((await store.current())?.epoch).toBe(2);
    const history = await other.history();
    expect(history.map((h) => [h.outcome, h.expectedEpoch, h.epochBefore, h.epochAfter, h.digest, h.code])).toEqual([
      ["activated", 0, 0, 1, a.digest, null],
      ["activated", 1, 1, 2, b.digest, null],
      ["conflict", 1, 2, 2, a.digest, "ACTIVATION_EPOCH_CONFLICT"],
      ["refused", 2, 2, 2, null, "RELEASE_BAD_NAME"],
      ["refused", 2, 2, 2, a.digest, "ACTIVATION_HANDSHAKE_FAILED"],
    ]);
    const ids = history.map((h) => h.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
  });

  test("two hosts activating on the same expected epoch: exactly one wins, the other gets ACTIVATION_EPOCH_CONFLICT", async (ctx) => {
    const { stores } = subject(ctx);
    const candidates = [release({ "x.md": "x" }), release({ "y.md": "y" })];
    // Both handshakes are held until both are inside theirs: both passed the early epoch check,
    // so the compare-and-swap alone decides.
    let inside = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const held = async () => {
      if (++inside === 2) open();
      await gate;
    };
    const results = await Promise.allSettled(stores.map((s, i) => s.activate({ path: candidates[i]!.path, expectedEpoch: 0 }, held)));
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(((lost[0] as PromiseRejectedResult).reason as { code: string }).code).toBe("ACTIVATION_EPOCH_CONFLICT");
    const winner = (won[0] as PromiseFulfilledResult<{ epoch: number; digest: string }>).value;
    expect(winner.epoch).toBe(1);
    expect(await stores[0].current()).toMatchObject({ epoch: 1, digest: winner.digest });
    const history = await stores[1].history();
    expect(history.map((h) => [h.outcome, h.epochBefore, h.epochAfter])).toEqual([
      ["activated", 0, 1],
      ["conflict", 1, 1],
    ]);
    expect(history[0]!.digest).toBe(winner.digest);
  });

  test("a release is stored once by digest and read back byte-exact by another host; a shared file is one blob", async (ctx) => {
    const { stores: [store, other], blobRows } = subject(ctx);
    const text = "# ünïcode, tabs\tand a trailing newline\r\n";
    const a = release({ "notes.md": text, "pkg/deep.py": "X = 1\n" });
    const b = release({ "notes.md": text, "pkg/deep.py": "X = 2\n" });
    expect(await store.putRelease(a)).toEqual({ stored: true });
    expect(await other.putRelease(a)).toEqual({ stored: false });
    expect(await other.putRelease(b)).toEqual({ stored: true });
    const read = await other.getRelease(a.digest);
    expect(read.digest).toBe(a.digest);
    expect(read.manifest).toEqual(a.manifest);
    expect(read.files.map((f) => f.name)).toEqual(a.files.map((f) => f.name));
    for (const f of read.files) expect(f.data.equals(readFileSync(join(a.path, f.name)))).toBe(true);
    expect((await store.getRelease(b.digest)).files.find((f) => f.name === "pkg/deep.py")!.data.toString()).toBe("X = 2\n");
    expect(await blobRows(blobDigest(Buffer.from(text, "utf8")))).toBe(1);
  });

  test("another host materialises a stored release into its own releases directory and activates it", async (ctx) => {
    const { stores: [store, other] } = subject(ctx);
    const built = release({ "pkg/mod.py": "Y = 'built elsewhere'\n" });
    await store.putRelease(built);
    const elsewhere = join(dir, `host-b-${dialect}`, "releases");
    const made = await materialiseRelease(other, built.digest, elsewhere);
    expect(made).toMatchObject({ digest: built.digest, path: join(elsewhere, built.digest), reused: false });
    for (const f of built.files) expect(readFileSync(join(made.path, f.name)).equals(readFileSync(join(built.path, f.name)))).toBe(true);
    expect((await materialiseRelease(other, built.digest, elsewhere)).reused).toBe(true);
    expect(await other.activate({ path: made.path, expectedEpoch: 0 }, ok)).toMatchObject({ epoch: 1, digest: built.digest, path: made.path });
    expect((await failure(materialiseRelease(other, "f".repeat(64), elsewhere))).code).toBe("RELEASE_NOT_FOUND");
  });

  test("a stored file whose bytes changed in the database reads back as RELEASE_CORRUPT, not as a release", async (ctx) => {
    const { stores: [store], tamperBlob } = subject(ctx);
    const damaged = release({ "damaged.md": `damaged ${dialect}` });
    await store.putRelease(damaged);
    await tamperBlob(blobDigest(Buffer.from(`damaged ${dialect}`)), Buffer.from("something else"));
    expect((await failure(store.getRelease(damaged.digest))).code).toBe("RELEASE_CORRUPT");
  });

  test("an unknown digest is RELEASE_NOT_FOUND", async (ctx) => {
    const { stores: [store] } = subject(ctx);
    const missing = await failure(store.getRelease("0".repeat(64)));
    expect(missing.code).toBe("RELEASE_NOT_FOUND");
    expect(missing.error.message).toContain("0".repeat(64));
  });
});
