// `klbr log`, `display get` and `web` read the SQLite file hosts share by `serve --sqlite-file`
// (C21) when given it, not the data directory's; with `--database` too, they refuse (two logs).
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { migrateHostDb, openSqlite } from "../src/db/open";
import { sqliteStore } from "../src/store/sqlite";
import { klbrRun } from "./cli-run";
import { removeTree, tempDir } from "./helpers";

let dir: string;
let file: string;

beforeAll(async () => {
  dir = tempDir("klbr-readfile-");
  file = join(dir, "shared.sqlite");
  const sqlite = openSqlite(file);
  const store = sqliteStore(migrateHostDb(sqlite), sqlite);
  await store.recordInput({ sessionId: "shared-s", source: "operator", receivedAtMs: 1000, payload: { text: "in the shared file" }, attention: null });
  await store.close();
});
afterAll(() => removeTree(dir));

test("klbr log --sqlite-file reads that file; the data directory has none", async () => {
  const r = await klbrRun(["-d", join(dir, "data"), "log", "--json", "--sqlite-file", file]);
  expect(r.stderr).toBe("");
  expect(r.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { payload: unknown }).payload)).toEqual([{ text: "in the shared file" }]);
  const without = await klbrRun(["-d", join(dir, "data"), "log"]);
  expect(without.stderr).toMatch(/^klbr: HOST_NOT_RUNNING: no klbr database at .*data\/klbr\.sqlite/);
  const both = await klbrRun(["log", "--sqlite-file", file, "--database", "postgres://u@localhost/db"]);
  expect(both.code).toBe(64);
  expect(both.stderr).toMatch(/^klbr: CLI_USAGE: --sqlite-file and --database name two logs/);
});
