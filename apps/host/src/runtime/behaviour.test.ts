// The behaviour manager's first start: the default source released and activated at epoch 1, and
// two hosts first started at once on one log (C21), where only one activation can win.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import type { Worker } from "@klbr/supervisor";
import { afterEach, expect, test } from "vitest";
import { BehaviourManager, type ReleaseRef } from "./behaviour";
import type { HooksGeneration } from "./hooks-generation";

const DEFAULT_SOURCE = fileURLToPath(new URL("../../../../python/klbr_hooks", import.meta.url));
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A manager whose workers are stand-ins: each spawn is recorded, and held until `release` opens. */
function manager(sqlite: Database.Database, hold: Promise<void>) {
  const releasesDir = mkdtempSync(join(tmpdir(), "klbr-behaviour-"));
  dirs.push(releasesDir);
  const spawned: Array<{ release: ReleaseRef; stopped: boolean }> = [];
  const m = new BehaviourManager(sqlite, releasesDir, DEFAULT_SOURCE, async (release) => {
    const entry = { release, stopped: false };
    spawned.push(entry);
    await hold;
    const worker = { shutdown: async () => void (entry.stopped = true) } as unknown as Worker;
    const gen: HooksGeneration = { worker, revision: release.digest, epoch: release.epoch, path: release.path, hooks: {}, pinnedBy: new Set(), retired: false };
    return gen;
  });
  m.migrate();
  return { m, spawned, releasesDir };
}

test("first start: the default source is released into this host's releases and activated at epoch 1", async () => {
  const sqlite = new Database(":memory:");
  const a = manager(sqlite, Promise.resolve());
  const gen = (await a.m.startActive())!;
  expect(gen.epoch).toBe(1);
  expect(gen.path.startsWith(a.releasesDir)).toBe(true);
  expect(a.spawned).toHaveLength(1);
  // A later start runs the active release, activating nothing.
  const again = (await manager(sqlite, Promise.resolve()).m.startActive())!;
  expect(again).toMatchObject({ epoch: 1, path: gen.path, revision: gen.revision });
});

test("two hosts first started at once on one log: one activation wins, the other runs the winner's release (no ACTIVATION_EPOCH_CONFLICT)", async () => {
  const sqlite = new Database(":memory:");
  let open!: () => void;
  const both = new Promise<void>((resolve) => (open = resolve));
  const a = manager(sqlite, both);
  const b = manager(sqlite, both);
  const starts = [a.m.startActive(), b.m.startActive()];
  // Both candidates are up before either compare-and-swap: both read epoch 0.
  while (a.spawned.length + b.spawned.length < 2) await new Promise((r) => setTimeout(r, 1));
  open();
  const [ga, gb] = (await Promise.all(starts)) as [HooksGeneration, HooksGeneration];
  expect(ga.epoch).toBe(1);
  expect(gb.epoch).toBe(1);
  expect(gb.path).toBe(ga.path);
  expect(gb.revision).toBe(ga.revision);
  // The loser's candidate was stopped, and it started one worker on the winner's release.
  const loser = ga.path.startsWith(a.releasesDir) ? b : a;
  expect(loser.spawned).toHaveLength(2);
  expect(loser.spawned[0]!.stopped).toBe(true);
  expect(loser.spawned[1]!.release).toMatchObject({ path: ga.path, epoch: 1 });
});
