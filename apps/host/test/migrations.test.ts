import { readFileSync } from "node:fs";
import { join } from "node:path";
import { activationMigrationsFolder, ACTIVATION_MIGRATIONS_TABLE, openActivationStore } from "@klbr/activation";
import { afterEach, describe, expect, test } from "vitest";
import { HOST_MIGRATIONS_TABLE, hostMigrationsFolder, migrateHostDb, openSqlite } from "../src/db/open";
import { tempDir } from "./helpers";
import { rmSync } from "node:fs";

interface Journal {
  entries: Array<{ idx: number; when: number; tag: string }>;
}

function journal(folder: string): Journal {
  return JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as Journal;
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("migrations", () => {
  test.each([
    ["host", hostMigrationsFolder()],
    ["activation", activationMigrationsFolder],
  ])("%s journal stamps only increase (drizzle skips a migration stamped earlier than the newest applied)", (_name, folder) => {
    const entries = journal(folder).entries;
    expect(entries.length).toBeGreaterThan(0);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.when).toBeGreaterThan(entries[i - 1]!.when);
  });

  test("every migration of the host and of activation is applied, in its own table, and re-running is a no-op", () => {
    const dir = tempDir();
    dirs.push(dir);
    const sqlite = openSqlite(join(dir, "klbr.sqlite"));
    migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
    migrateHostDb(sqlite);
    const applied = (table: string) => (sqlite.prepare(`SELECT created_at FROM "${table}" ORDER BY created_at`).all() as Array<{ created_at: number }>).map((r) => Number(r.created_at));
    expect(applied(HOST_MIGRATIONS_TABLE)).toEqual(journal(hostMigrationsFolder()).entries.map((e) => e.when));
    expect(applied(ACTIVATION_MIGRATIONS_TABLE)).toEqual(journal(activationMigrationsFolder).entries.map((e) => e.when));
    expect(sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
    const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type='table'").all() as Array<{ name: string }>).map((t) => t.name);
    for (const t of ["events", "effects", "executions", "host_requests", "waits", "kernel_resets", "header_records", "work_items", "work_item_assessments", "orientation_candidates", "orientation_adoptions"]) expect(tables).toContain(t);
    sqlite.close();
  });
});
