import { fork, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "tsup";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openActivationStore, openDatabase, snapshotRelease } from "../src/index.js";
import { removeDir, tempDir, writeSource } from "./helpers/tree.js";

const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
const CONTENDERS = 24;
// The contender is bundled once (our src, resolved through the @klbr/source condition) and run by
// plain node: 24 processes each starting a TypeScript loader would spend the test in start-up.
// It lives under node_modules/ so better-sqlite3 and drizzle-orm resolve from this package.
const OUT = path.join(PACKAGE, "node_modules", ".cache", `klbr-activation-race-${process.pid}`);
const CHILD = path.join(OUT, "race-child.js");

beforeAll(async () => {
  await build({
    entry: { "race-child": path.join(PACKAGE, "test/helpers/race-child.ts") },
    format: ["esm"],
    outDir: OUT,
    platform: "node",
    target: "node20",
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    external: ["better-sqlite3", "drizzle-orm"],
    esbuildOptions(options) {
      options.conditions = ["@klbr/source"];
    },
  });
}, 60_000);
afterAll(() => fs.rmSync(OUT, { recursive: true, force: true }));

type Message = { phase: "ready" | "handshake" | "done"; pid: number; won?: number; code?: string };

/** Collect one message of `phase` from every child. */
function all(children: ChildProcess[], phase: Message["phase"]): Promise<Message[]> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<Message>((resolve, reject) => {
          const onMessage = (m: Message) => {
            if (m.phase !== phase) return;
            child.off("message", onMessage);
            resolve(m);
          };
          child.on("message", onMessage);
          child.once("exit", (code) => reject(new Error(`contender ${child.pid} exited with ${code} before "${phase}"`)));
        }),
    ),
  );
}

/**
 * Fork every contender; once all hold an open connection, start them together; once all are inside
 * their handshake (verified, early epoch check passed), let them all reach the compare-and-swap.
 */
async function race(dbFile: string, releases: string[], expectedEpoch: number): Promise<Message[]> {
  const children = Array.from({ length: CONTENDERS }, (_, i) =>
    fork(CHILD, [dbFile, releases[i % releases.length]!, String(expectedEpoch)], {
      execArgv: [],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
  const ready = all(children, "ready");
  const handshakes = all(children, "handshake");
  const done = all(children, "done");
  await ready;
  for (const child of children) child.send("go");
  await handshakes;
  for (const child of children) child.send("proceed");
  const results = await done;
  await Promise.all(children.map((c) => (c.exitCode !== null ? Promise.resolve() : new Promise((r) => c.once("exit", r)))));
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
