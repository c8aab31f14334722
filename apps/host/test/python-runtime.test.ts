import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import { defaultPythonDir } from "../src/paths";
import { readLog, type LogEntry } from "../src/store/log-view";
import { hostVersion } from "../src/version";
import { resultOf, startTestHost, tempDir } from "./helpers";

const REPO = join(defaultPythonDir(), "..");
const PINNED = (JSON.parse(readFileSync(join(REPO, "fixtures", "behavior.json"), "utf8")) as { digest: string }).digest;

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** A private copy of the repository's Python runtime (klbr + klbr_hooks), without bytecode caches. */
function pythonCopy(): string {
  const dir = tempDir("klbr-py-");
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const pkg of ["klbr", "klbr_hooks"]) {
    cpSync(join(defaultPythonDir(), pkg), join(dir, pkg), { recursive: true, filter: (src) => !src.includes("__pycache__") });
  }
  return dir;
}

/** The log's entries, read through a second connection as `klbr log` reads them. */
function logOf(dataDir: string): LogEntry[] {
  const sqlite = new Database(join(dataDir, "klbr.sqlite"), { readonly: true });
  try {
    return readLog(sqlite);
  } finally {
    sqlite.close();
  }
}

function cachesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name === "__pycache__" || entry.name.endsWith(".pyc")) found.push(join(d, entry.name));
      else if (entry.isDirectory()) walk(join(d, entry.name));
    }
  };
  walk(dir);
  return found;
}

describe("the Python runtime the host runs", () => {
  test("a __pycache__ beside the default behaviour source does not stop a fresh data directory; the release is the pinned digest", async () => {
    const python = pythonCopy();
    mkdirSync(join(python, "klbr_hooks", "__pycache__"));
    writeFileSync(join(python, "klbr_hooks", "__pycache__", "defaults.cpython-311.pyc"), "\0");
    const t = await startTestHost({ pythonDir: python });
    cleanup.push(t.close);
    const status = (await t.host.status()) as { hooks: { revision: string } };
    expect(status.hooks.revision).toBe(PINNED);
    expect(readdirSync(join(t.dataDir, "releases"))).toEqual([PINNED]);
  }, 60_000);

  test("workers write no bytecode: after cells import modules, no cache appears in the runtime or the release", async () => {
    // CI exports PYTHONDONTWRITEBYTECODE=1; the host must not depend on it.
    const saved = process.env.PYTHONDONTWRITEBYTECODE;
    delete process.env.PYTHONDONTWRITEBYTECODE;
    cleanup.push(() => {
      if (saved !== undefined) process.env.PYTHONDONTWRITEBYTECODE = saved;
    });
    const python = pythonCopy();
    const t = await startTestHost({ pythonDir: python });
    cleanup.push(t.close);
    const r = await t.host.execute("import klbr.digest, klbr.manifest, json\n(await runtime.send('hi'))['status']");
    expect(resultOf(r)).toBe("'confirmed'");
    expect(cachesUnder(python)).toEqual([]);
    expect(cachesUnder(join(t.dataDir, "releases"))).toEqual([]);
  }, 60_000);

  test("a worker whose hello names another runtime version is recorded as an incident; the same version is not", async () => {
    const python = pythonCopy();
    const versionFile = join(python, "klbr", "_version.py");
    writeFileSync(versionFile, readFileSync(versionFile, "utf8").replace(/__version__ = "[^"]*"/, '__version__ = "9.9.9-other"'));
    const t = await startTestHost({ pythonDir: python });
    cleanup.push(t.close);
    const mismatches = logOf(t.dataDir).filter((e) => e.kind === "incident.worker.runtime_version_mismatch");
    expect(mismatches.map((e) => JSON.parse(JSON.stringify(e.detail)) as Record<string, unknown>)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: "hooks", worker_version: "9.9.9-other", host_version: hostVersion() }),
        expect.objectContaining({ role: "workbench", session_id: "root", worker_version: "9.9.9-other", host_version: hostVersion() }),
      ]),
    );
    const same = await startTestHost();
    cleanup.push(same.close);
    expect(logOf(same.dataDir).filter((e) => e.kind.includes("runtime_version"))).toEqual([]);
    expect(existsSync(python)).toBe(true);
  }, 60_000);
});
