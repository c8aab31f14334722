// The behaviour manager's first start: the default source released and activated at epoch 1, and
// two hosts first started at once on one log (C21), where only one activation can win; a host that
// did not build the active release runs it from the database. On SQLite and on PostgreSQL.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { openActivationStore } from "@klbr/activation";
import type { Worker } from "@klbr/supervisor";
import { afterEach, describe, expect, test } from "vitest";
import { testDatabase } from "../../../../test-support/postgres";
import { migrateHostDb } from "../db/open";
import { migratePostgres, openPostgres, type PgHost } from "../db/pg-open";
import type { AsyncActivationStore } from "../store/activation/api";
import { pgActivationStore } from "../store/activation/pg";
import { sqliteActivationStore } from "../store/activation/sqlite";
import { BehaviourManager, type ReleaseRef } from "./behaviour";
import type { HooksGeneration } from "./hooks-generation";

const DEFAULT_SOURCE = fileURLToPath(new URL("../../../../python/klbr_hooks", import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh, empty log of one dialect; `store()` is one more host's activation store on it (PostgreSQL: its own pool). */
type Log = { store(): AsyncActivationStore };

const freshLog: Record<"sqlite" | "postgres", () => Promise<Log>> = {
  sqlite: async () => {
    const sqlite = new Database(":memory:");
    cleanups.push(() => sqlite.close());
    const db = migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
    return { store: () => sqliteActivationStore(sqlite, db) };
  },
  postgres: async () => {
    const made = await testDatabase();
    if (made.skip !== null) throw new Error(made.skip);
    cleanups.push(() => made.stop());
    const open = (): PgHost => {
      const pg = openPostgres(made.url, { max: 2 });
      cleanups.push(() => pg.close());
      return pg;
    };
    await migratePostgres(open().pool);
    return { store: () => pgActivationStore(open()) };
  },
};

function tempReleases(): string {
  const dir = mkdtempSync(join(tmpdir(), "klbr-behaviour-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A manager whose workers are stand-ins: each spawn is recorded, and held until `release` opens. */
function manager(store: AsyncActivationStore, hold: Promise<void>, defaultSource = DEFAULT_SOURCE) {
  const releasesDir = tempReleases();
  const spawned: Array<{ release: ReleaseRef; stopped: boolean }> = [];
  const m = new BehaviourManager(store, releasesDir, defaultSource, async (release) => {
    const entry = { release, stopped: false };
    spawned.push(entry);
    await hold;
    const worker = { shutdown: async () => void (entry.stopped = true) } as unknown as Worker;
    const gen: HooksGeneration = { worker, revision: release.digest, epoch: release.epoch, path: release.path, hooks: {}, pinnedBy: new Set(), retired: false };
    return gen;
  });
  return { m, spawned, releasesDir };
}

describe.each(["sqlite", "postgres"] as const)("on %s", (dialect) => {
  test("first start: the default source is released into this host's releases and activated at epoch 1", async () => {
    const log = await freshLog[dialect]();
    const a = manager(log.store(), Promise.resolve());
    const gen = (await a.m.startActive())!;
    expect(gen.epoch).toBe(1);
    expect(gen.path).toBe(join(a.releasesDir, gen.revision));
    expect(a.spawned).toHaveLength(1);
    // A later start runs the active release, activating nothing.
    const again = manager(log.store(), Promise.resolve());
    expect(await again.m.startActive()).toMatchObject({ epoch: 1, revision: gen.revision });
    expect(again.spawned).toHaveLength(1);
  });

  test("two hosts first started at once on one log: one activation wins, the other runs the winner's release (no ACTIVATION_EPOCH_CONFLICT)", async () => {
    const log = await freshLog[dialect]();
    let open!: () => void;
    const both = new Promise<void>((resolve) => (open = resolve));
    const a = manager(log.store(), both);
    const b = manager(log.store(), both);
    const starts = [a.m.startActive(), b.m.startActive()];
    // Both candidates are up before either compare-and-swap: both read epoch 0.
    while (a.spawned.length + b.spawned.length < 2) await new Promise((r) => setTimeout(r, 1));
    open();
    const [ga, gb] = (await Promise.all(starts)) as [HooksGeneration, HooksGeneration];
    expect(ga.epoch).toBe(1);
    expect(gb.epoch).toBe(1);
    expect(gb.revision).toBe(ga.revision);
    // Each host runs its own copy of the one active release.
    expect(ga.path).toBe(join(a.releasesDir, ga.revision));
    expect(gb.path).toBe(join(b.releasesDir, ga.revision));
    // The loser's candidate was stopped, and it started one worker on the winner's release.
    const loser = a.spawned.length === 2 ? a : b;
    expect(loser.spawned).toHaveLength(2);
    expect(loser.spawned[0]!.stopped).toBe(true);
    expect(loser.spawned[1]!.release).toMatchObject({ path: join(loser.releasesDir, ga.revision), digest: ga.revision, epoch: 1 });
  });

  test("a host that did not build the active release runs it from the database: its files materialised byte for byte in its own releases", async () => {
    const log = await freshLog[dialect]();
    const a = manager(log.store(), Promise.resolve());
    const ga = (await a.m.startActive())!;
    // B's own default source does not exist: whatever it runs, it got from the database.
    const b = manager(log.store(), Promise.resolve(), join(tmpdir(), "klbr-no-such-source"));
    expect(readdirSync(b.releasesDir)).toEqual([]);
    const gb = (await b.m.startActive())!;
    expect(gb).toMatchObject({ epoch: 1, revision: ga.revision, path: join(b.releasesDir, ga.revision) });
    const names = readdirSync(ga.path).sort();
    expect(readdirSync(gb.path).sort()).toEqual(names);
    for (const name of names) expect(readFileSync(join(gb.path, name)), name).toEqual(readFileSync(join(ga.path, name)));
  });
});
