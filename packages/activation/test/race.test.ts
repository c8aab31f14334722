import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openActivationStore, openDatabase, snapshotRelease } from "../src/index.js";
import { all, bundleChild, exited, forkAll, type ChildMessage } from "./helpers/children.js";
import { removeDir, tempDir, writeSource } from "./helpers/tree.js";

const CONTENDERS = 24;
let child: { script: string; dispose: () => void };
beforeAll(async () => {
  child = await bundleChild("race-child");
}, 60_000);
afterAll(() => child?.dispose());

/**
 * Fork every contender; once all hold an open connection, start them together; once all are inside
 * their handshake (verified, early epoch check passed), let them all reach the compare-and-swap.
 */
async function race(dbFile: string, releases: string[], expectedEpoch: number): Promise<ChildMessage[]> {
  const children = forkAll(child.script, CONTENDERS, (i) => [dbFile, releases[i % releases.length]!, String(expectedEpoch)]);
  const ready = all(children, "ready");
  const handshakes = all(children, "handshake");
  const done = all(children, "done");
  await ready;
  for (const c of children) c.send("go");
  await handshakes;
  for (const c of children) c.send("proceed");
  const results = await done;
  await exited(children);
  return results;
}

describe("concurrent activation from separate processes", () => {
  const base = tempDir();
  afterAll(() => removeDir(base));

  it(`exactly one of ${CONTENDERS} contenders wins each epoch; the rest get ACTIVATION_EPOCH_CONFLICT; history holds all`, async () => {
    const releases = ["a", "b", "c"].map((tag) => {
      const draft = path.join(base, `draft-${tag}`);
      fs.mkdirSync(draft);
      writeSource(draft, { "tag.md": tag });
      return snapshotRelease(draft, path.join(base, "releases")).path;
    });
    const dbFile = path.join(base, "klbr.db");
    const db = openDatabase(dbFile);
    const store = openActivationStore(db);
    store.migrate();

    for (const expectedEpoch of [0, 1]) {
      const results = await race(dbFile, releases, expectedEpoch);
      const winners = results.filter((r) => r.won !== undefined);
      const losers = results.filter((r) => r.won === undefined);
      expect(winners.map((w) => w.won)).toEqual([expectedEpoch + 1]);
      expect(losers.map((l) => l.code)).toEqual(Array(CONTENDERS - 1).fill("ACTIVATION_EPOCH_CONFLICT"));
      expect(new Set(results.map((r) => r.pid)).size).toBe(CONTENDERS); // 24 distinct processes
      expect(store.current()?.epoch).toBe(expectedEpoch + 1);
    }

    const history = store.history();
    expect(history).toHaveLength(2 * CONTENDERS);
    expect(history.filter((h) => h.outcome === "activated").map((h) => [h.epochBefore, h.epochAfter])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(history.filter((h) => h.outcome === "conflict")).toHaveLength(2 * (CONTENDERS - 1));
    const lastWin = history.filter((h) => h.outcome === "activated").at(-1)!;
    expect(store.current()).toMatchObject({ epoch: 2, path: lastWin.path, digest: lastWin.digest });
    db.close();
  }, 120_000);
});
