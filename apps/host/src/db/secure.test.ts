import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import { tsNode } from "../../test/ts-child";
import { initCommand } from "../cli/commands/init";
import { migrateHostDb, openHostDatabase } from "./open";
import { databaseFiles, secureDataDir } from "./secure";

const dirs: string[] = [];
const open: Database.Database[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function fresh(): string {
  const dir = mkdtempSync("/tmp/klbr-sec-");
  dirs.push(dir);
  return dir;
}
const mode = (path: string) => statSync(path).mode & 0o777;

/** A data directory as an older klbr (or a lax umask) left it: 0755, database files 0644. */
function laxDataDir(): { dataDir: string; db: string } {
  const dataDir = join(fresh(), "data");
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  const db = join(dataDir, "klbr.sqlite");
  const sqlite = new Database(db);
  sqlite.pragma("journal_mode = WAL");
  sqlite.exec("create table t (x); insert into t values (1)");
  // The connection stays open until the test ends, so -wal and -shm stay as a kill -9 leaves them.
  open.push(sqlite);
  for (const file of databaseFiles(db)) chmodSync(file, 0o644);
  return { dataDir, db };
}

describe("data directory and database permissions (C15)", () => {
  test("klbr init tightens an existing 0755 directory and 0644 database files", async () => {
    const { dataDir, db } = laxDataDir();
    const stdout = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await initCommand({ dataDir })).toBe(0);
    } finally {
      process.stdout.write = stdout;
    }
    expect(mode(dataDir)).toBe(0o700);
    for (const file of databaseFiles(db)) if (existsSync(file)) expect(mode(file)).toBe(0o600);
    expect(mode(db)).toBe(0o600);
  });

  test("the host's open tightens them too, and a new database is never created wider than 0600", () => {
    const { dataDir, db } = laxDataDir();
    secureDataDir(dataDir);
    const sqlite = openHostDatabase(db);
    try {
      expect(mode(dataDir)).toBe(0o700);
      for (const file of databaseFiles(db)) expect(mode(file)).toBe(0o600);
    } finally {
      sqlite.close();
    }
    const other = join(fresh(), "new.sqlite");
    const created = openHostDatabase(other);
    try {
      migrateHostDb(created);
      for (const file of databaseFiles(other)) expect(mode(file)).toBe(0o600);
    } finally {
      created.close();
    }
  });

  test("a data directory that cannot be tightened (another uid owns it) is refused with DATA_DIR_PERMISSIONS", () => {
    const { dataDir } = laxDataDir();
    chmodSync(join(dataDir, ".."), 0o755);
    const script = fileURLToPath(new URL("./secure-as-nobody.ts", import.meta.url));
    const asRoot = process.getuid?.() === 0;
    // As root chmod always succeeds, so the starter runs as nobody against root's directory.
    const { file: node, args } = tsNode(script, dataDir);
    const child = spawnSync(node, args, {
      encoding: "utf8",
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", TSX_DISABLE_CACHE: "1" },
    });
    if (!asRoot) return; // not root: this uid owns what it created, so there is nothing to refuse
    expect(child.stderr).toBe("");
    const result = JSON.parse(child.stdout) as { code: string; message: string };
    expect(result.code).toBe("DATA_DIR_PERMISSIONS");
    expect(result.message).toContain(dataDir);
    expect(mode(dataDir)).toBe(0o755);
  });
});

describe("PRAGMA quick_check at open", () => {
  test("a damaged database is refused with DATABASE_CORRUPT naming the file and what to do", () => {
    const dir = fresh();
    const file = join(dir, "klbr.sqlite");
    const sqlite = new Database(file);
    sqlite.exec("create table t (x text); create index t_x on t(x)");
    const insert = sqlite.prepare("insert into t values (?)");
    for (let i = 0; i < 400; i++) insert.run(`row ${i} ${"y".repeat(50)}`);
    sqlite.close();
    // Scribble over the middle pages (leaving the header page intact): the b-trees no longer check out.
    const bytes = readFileSync(file);
    const pageSize = bytes.readUInt16BE(16);
    for (let page = 3; page < bytes.length / pageSize - 1; page += 2) bytes.fill(0x5a, page * pageSize + 8, page * pageSize + 200);
    writeFileSync(file, bytes);
    expect(() => openHostDatabase(file)).toThrow(expect.objectContaining({ code: "DATABASE_CORRUPT", message: expect.stringContaining(file) }));
    expect(() => openHostDatabase(file)).toThrow(/move the file aside/);
  });

  test("a file that is not a database at all is DATABASE_CORRUPT too", () => {
    const file = join(fresh(), "klbr.sqlite");
    writeFileSync(file, "this is not sqlite ".repeat(300));
    expect(() => openHostDatabase(file)).toThrow(expect.objectContaining({ code: "DATABASE_CORRUPT", message: expect.stringContaining(file) }));
  });

  test("a sound database opens", () => {
    const file = join(fresh(), "klbr.sqlite");
    const sqlite = openHostDatabase(file);
    migrateHostDb(sqlite);
    sqlite.close();
    openHostDatabase(file).close();
  });
});
