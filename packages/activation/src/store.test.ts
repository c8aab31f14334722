import type Database from "better-sqlite3";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeDir, tempDir, writeSource } from "../test/helpers/tree.js";
import { openDatabase } from "./database.js";
import { isActivationError } from "./errors.js";
import { ACTIVATION_MIGRATIONS_TABLE } from "./migrations.js";
import { snapshotRelease, type Release } from "./release.js";
import { openActivationStore, type ActivationStore } from "./store.js";

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).reverse().forEach((fn) => fn()));

function setup(): { db: Database.Database; store: ActivationStore; release: (extra?: string) => string; base: string } {
  const base = tempDir();
  const db = openDatabase(path.join(base, "klbr.db"));
  cleanups.push(() => removeDir(base), () => db.close());
  let clock = 1_000;
  const store = openActivationStore(db, { now: () => clock++ });
  store.migrate();
  let n = 0;
  const release = (extra = "") => {
    const draft = path.join(base, `draft-${n++}`);
    fs.mkdirSync(draft);
    writeSource(draft, { "extra.md": extra });
    return snapshotRelease(draft, path.join(base, "releases")).path;
  };
  return { db, store, release, base };
}

const ok = async () => {};

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isActivationError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("openDatabase + migrate", () => {
  it("sets WAL, a busy timeout and foreign keys, and records migrations in its own table", () => {
    const { db, store } = setup();
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    const tables = db.prepare("select name from sqlite_master where type = 'table' order by name").pluck().all();
    expect(tables).toEqual(expect.arrayContaining([ACTIVATION_MIGRATIONS_TABLE, "activation_history", "activation_state"]));
    store.migrate(); // idempotent
    expect(db.prepare(`select count(*) from ${ACTIVATION_MIGRATIONS_TABLE}`).pluck().get()).toBe(1);
  });
});

describe("activate", () => {
  it("starts with nothing active; expectedEpoch 0 activates epoch 1, then 2", async () => {
    const { store, release } = setup();
    expect(store.current()).toBeNull();
    const a = release("a");
    const first = await store.activate({ path: a, expectedEpoch: 0 }, ok);
    expect(first).toMatchObject({ epoch: 1, path: a, digest: path.basename(a) });
    expect(store.current()).toEqual(first);
    const b = release("b");
    const second = await store.activate({ path: b, expectedEpoch: 1 }, ok);
    expect(second).toMatchObject({ epoch: 2, path: b });
    expect(store.history().map((h) => [h.outcome, h.epochBefore, h.epochAfter])).toEqual([
      ["activated", 0, 1],
      ["activated", 1, 2],
    ]);
  });

  it("passes the verified release to the handshake before switching", async () => {
    const { store, release } = setup();
    const a = release();
    const seen: Release[] = [];
    await store.activate({ path: a, expectedEpoch: 0 }, async (r) => {
      expect(store.current()).toBeNull(); // the switch comes after the handshake
      seen.push(r);
    });
    expect(seen.map((r) => [r.digest, r.path, r.manifest.hooks["delivery.review"]])).toEqual([[path.basename(a), a, "pol.main:delivery"]]);
  });

  it("a stale expectedEpoch is a conflict: nothing changes, the handshake never runs, history records it", async () => {
    const { store, release } = setup();
    const a = release("a");
    await store.activate({ path: a, expectedEpoch: 0 }, ok);
    let ran = false;
    const code = await codeOf(store.activate({ path: release("b"), expectedEpoch: 0 }, async () => void (ran = true)));
    expect(code).toBe("ACTIVATION_EPOCH_CONFLICT");
    expect(ran).toBe(false);
    expect(store.current()).toMatchObject({ epoch: 1, path: a });
    expect(store.history().at(-1)).toMatchObject({ outcome: "conflict", code: "ACTIVATION_EPOCH_CONFLICT", expectedEpoch: 0, epochBefore: 1, epochAfter: 1 });
  });

  it("a conflict that appears during the handshake is caught by the compare-and-swap", async () => {
    const { store, release } = setup();
    const a = release("a");
    const b = release("b");
    const code = await codeOf(
      store.activate({ path: a, expectedEpoch: 0 }, async () => {
        await store.activate({ path: b, expectedEpoch: 0 }, ok); // someone else wins meanwhile
      }),
    );
    expect(code).toBe("ACTIVATION_EPOCH_CONFLICT");
    expect(store.current()).toMatchObject({ epoch: 1, path: b });
    expect(store.history().map((h) => [h.outcome, h.path])).toEqual([
      ["activated", b],
      ["conflict", a],
    ]);
  });

  it("a failing handshake is refused and leaves the epoch unchanged", async () => {
    const { store, release } = setup();
    const a = release("a");
    await store.activate({ path: a, expectedEpoch: 0 }, ok);
    const boom = new Error("hello had the wrong revision");
    let caught: unknown;
    try {
      await store.activate({ path: release("b"), expectedEpoch: 1 }, async () => {
        throw boom;
      });
    } catch (error) {
      caught = error;
    }
    expect(isActivationError(caught) && caught.code).toBe("ACTIVATION_HANDSHAKE_FAILED");
    expect((caught as Error).cause).toBe(boom);
    expect((caught as Error).message).toContain("hello had the wrong revision");
    expect(store.current()).toMatchObject({ epoch: 1, path: a });
    expect(store.history().at(-1)).toMatchObject({ outcome: "refused", code: "ACTIVATION_HANDSHAKE_FAILED", epochBefore: 1, epochAfter: 1 });
  });

  it("a handshake that does not finish in time is refused, its signal aborts, and the epoch stays", async () => {
    const { store, release } = setup();
    let aborted = false;
    const code = await codeOf(
      store.activate(
        { path: release(), expectedEpoch: 0 },
        (_release, { signal }) =>
          new Promise<void>(() => {
            signal.addEventListener("abort", () => void (aborted = true));
          }),
        { handshakeTimeoutMs: 50 },
      ),
    );
    expect(code).toBe("ACTIVATION_HANDSHAKE_TIMEOUT");
    expect(aborted).toBe(true);
    expect(store.current()).toBeNull();
    expect(store.history()).toMatchObject([{ outcome: "refused", code: "ACTIVATION_HANDSHAKE_TIMEOUT", epochBefore: 0, epochAfter: 0 }]);
  });

  it("a path that is not a verified release is refused before any handshake, and recorded", async () => {
    const { store, release, base } = setup();
    let ran = false;
    const handshake = async () => void (ran = true);
    expect(await codeOf(store.activate({ path: path.join(base, "draft-x"), expectedEpoch: 0 }, handshake))).toBe("RELEASE_BAD_NAME");
    const a = release();
    const fake = path.join(base, "0".repeat(64));
    fs.cpSync(a, fake, { recursive: true });
    expect(await codeOf(store.activate({ path: fake, expectedEpoch: 0 }, handshake))).toBe("RELEASE_DIGEST_MISMATCH");
    const gone = path.join(base, "f".repeat(64));
    expect(await codeOf(store.activate({ path: gone, expectedEpoch: 0 }, handshake))).toBe("SOURCE_NOT_FOUND");
    expect(ran).toBe(false);
    expect(store.current()).toBeNull();
    expect(store.history().map((h) => [h.outcome, h.code, h.digest])).toEqual([
      ["refused", "RELEASE_BAD_NAME", null],
      ["refused", "RELEASE_DIGEST_MISMATCH", "0".repeat(64)],
      ["refused", "SOURCE_NOT_FOUND", "f".repeat(64)],
    ]);
  });

  it("refuses an expectedEpoch that is not an integer >= 0, and records each refusal", async () => {
    const { store, release } = setup();
    const a = release();
    for (const bad of [-1, 0.5, Number.NaN, 2 ** 60]) {
      expect(await codeOf(store.activate({ path: a, expectedEpoch: bad }, ok))).toBe("ACTIVATION_BAD_EPOCH");
    }
    expect(store.current()).toBeNull();
    expect(store.history().map((h) => [h.outcome, h.code, h.expectedEpoch, h.epochBefore, h.digest])).toEqual(
      [-1, -1, -1, -1].map((e) => ["refused", "ACTIVATION_BAD_EPOCH", e, 0, path.basename(a)]),
    );
    expect(store.history().map((h) => h.message)).toEqual([
      expect.stringContaining("got -1"),
      expect.stringContaining("got 0.5"),
      expect.stringContaining("got NaN"),
      expect.stringContaining(`got ${2 ** 60}`),
    ]);
  });

  it("a compare-and-swap that fails in the database changes nothing and is still recorded", async () => {
    const { db, store, release } = setup();
    const a = release();
    db.exec("create trigger refuse_switch before update on activation_state begin select raise(abort, 'disk says no'); end");
    await expect(store.activate({ path: a, expectedEpoch: 0 }, ok)).rejects.toThrow("disk says no");
    expect(store.current()).toBeNull();
    expect(store.history()).toMatchObject([{ outcome: "refused", code: "INTERNAL", message: "disk says no", digest: path.basename(a), epochBefore: 0, epochAfter: 0 }]);
  });

  it("re-activating the active release is a new epoch", async () => {
    const { store, release } = setup();
    const a = release();
    await store.activate({ path: a, expectedEpoch: 0 }, ok);
    expect(await store.activate({ path: a, expectedEpoch: 1 }, ok)).toMatchObject({ epoch: 2, path: a });
  });

  it("history rows carry increasing ids and the store clock", async () => {
    const { store, release } = setup();
    await store.activate({ path: release(), expectedEpoch: 0 }, ok);
    await codeOf(store.activate({ path: release("x"), expectedEpoch: 0 }, ok));
    const rows = store.history();
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
    expect(rows[0]!.atMs).toBeLessThan(rows[1]!.atMs);
    expect(rows[1]!.message).toContain("expected epoch 0");
  });
});
