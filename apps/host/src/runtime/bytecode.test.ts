import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { resolvePython } from "@klbr/supervisor";
import { afterEach, describe, expect, it } from "vitest";
import { RuntimeBytecode } from "./bytecode";
import { runtimeFingerprint } from "./fingerprint";

// klbr's runtime compiled once per version into a zip the workers import (issue 23).
const PYTHON_DIR = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..", "..", "..", "python");
const python = resolvePython();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A copy of the runtime (its `klbr` package) that a test may change. */
function runtimeCopy(): string {
  const dir = tempDir("klbr-bcr-");
  cpSync(join(PYTHON_DIR, "klbr"), join(dir, "klbr"), { recursive: true, filter: (src) => !src.includes("__pycache__") });
  return dir;
}

function cache(pythonDir: string, dir: string | null = tempDir("klbr-bc-")) {
  const errors: Error[] = [];
  const bytecode = new RuntimeBytecode({ python, pythonDir, dir, onError: (e) => errors.push(e) });
  return { bytecode, errors, dir };
}

/** What a worker started as the host starts it (`-B`, the zip first on its path) reports of `code`'s last line. */
function inWorker(path: string[], code: string): string {
  return execFileSync(python, ["-B", "-c", code], { encoding: "utf8", env: { PYTHONPATH: path.join(":") } }).trim();
}

describe("RuntimeBytecode", () => {
  it("builds the runtime's zip once; a worker imports klbr from it, its own frames still recognised, and writes no bytecode", async () => {
    const runtime = runtimeCopy();
    const { bytecode, errors, dir } = cache(runtime);
    const fingerprint = runtimeFingerprint(runtime);
    expect(bytecode.current(fingerprint)).toBeNull(); // not built yet: the build starts
    const zip = await bytecode.prepare(fingerprint);
    expect(errors).toEqual([]);
    expect(zip).not.toBeNull();
    expect(bytecode.current(fingerprint)).toBe(zip);
    expect(bytecode.builds).toBe(1);
    expect(readdirSync(dir!)).toEqual([zip!.slice(dir!.length + 1)]); // no temporary file left
    const report = inWorker(
      [zip!, runtime],
      [
        "import json, os, klbr.worker.server as s, klbr.worker.cells as c",
        // The interrupt path tells the worker's frames from the cell's by file name: both agree.
        "print(json.dumps([s.__file__, s.__spec__.loader.__class__.__name__, c._evaluate.__code__.co_filename == os.path.join(s._WORKER_DIR, 'cells.py'), s.__loader__.get_source('klbr.worker.server') is not None]))",
      ].join("\n"),
    );
    expect(JSON.parse(report)).toEqual([`${zip}/klbr/worker/server.pyc`, "zipimporter", true, true]);
    expect(existsSync(join(runtime, "klbr", "__pycache__"))).toBe(false);
  });

  it("never uses the zip of a runtime that changed since: the new runtime gets its own build", async () => {
    const runtime = runtimeCopy();
    const { bytecode } = cache(runtime);
    const before = await bytecode.prepare(runtimeFingerprint(runtime));
    appendFileSync(join(runtime, "klbr", "_version.py"), 'CHANGED = "since the first build"\n');
    const fingerprint = runtimeFingerprint(runtime);
    expect(bytecode.current(fingerprint)).toBeNull();
    const after = await bytecode.prepare(fingerprint);
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
    expect(inWorker([after!, runtime], "import klbr._version as v; print(v.CHANGED)")).toBe("since the first build");
    expect(inWorker([before!, runtime], "import klbr._version as v; print(hasattr(v, 'CHANGED'))")).toBe("False");
  });

  it("a cache directory that cannot be written: an error once, and workers compile as before (no zip, no retry)", async () => {
    const runtime = runtimeCopy();
    const blocker = join(tempDir("klbr-bcb-"), "file");
    writeFileSync(blocker, "");
    const { bytecode, errors } = cache(runtime, join(blocker, "bytecode"));
    const fingerprint = runtimeFingerprint(runtime);
    expect(await bytecode.prepare(fingerprint)).toBeNull();
    expect(errors).toHaveLength(1);
    expect(bytecode.current(fingerprint)).toBeNull();
    expect(bytecode.builds).toBe(1);
  });

  it("a runtime that does not compile: an error, no zip, and no retry", async () => {
    const runtime = runtimeCopy();
    writeFileSync(join(runtime, "klbr", "broken.py"), "def (:\n");
    const { bytecode, errors, dir } = cache(runtime);
    const fingerprint = runtimeFingerprint(runtime);
    expect(await bytecode.prepare(fingerprint)).toBeNull();
    expect(errors[0]?.message).toMatch(/SyntaxError/);
    expect(readdirSync(dir!)).toEqual([]);
    expect(bytecode.current(fingerprint)).toBeNull();
    expect(bytecode.builds).toBe(1);
  });

  it("off (no directory): nothing is built", async () => {
    const { bytecode } = cache(runtimeCopy(), null);
    expect(await bytecode.prepare("any")).toBeNull();
    expect(bytecode.builds).toBe(0);
  });
});

describe("RuntimeBytecode's sweep of old zips", () => {
  const DAY = 24 * 3600 * 1000;
  /** A file in `dir` last modified `days` ago. */
  function aged(dir: string, name: string, days: number): string {
    const path = join(dir, name);
    writeFileSync(path, "x");
    const when = new Date(Date.now() - days * DAY);
    utimesSync(path, when, when);
    return path;
  }

  it("deletes zips and build leftovers untouched for 7 days, never the one in use nor a file it did not write", async () => {
    const runtime = runtimeCopy();
    const { bytecode, dir } = cache(runtime);
    const old = "klbr-" + "a".repeat(32) + ".zip";
    const recent = "klbr-" + "b".repeat(32) + ".zip";
    aged(dir!, old, 8);
    aged(dir!, recent, 6);
    aged(dir!, ".klbr-crashed.tmp", 8);
    aged(dir!, "klbr-notmine.zip", 30);
    aged(dir!, "notes.txt", 30);
    const zip = await bytecode.prepare(runtimeFingerprint(runtime));
    expect(zip).not.toBeNull();
    expect(readdirSync(dir!).sort()).toEqual([recent, zip!.slice(dir!.length + 1), "klbr-notmine.zip", "notes.txt"].sort());
  });

  it("keeps the zip in use even when its mtime is old: a host touches it as it starts", async () => {
    const runtime = runtimeCopy();
    const { bytecode, dir } = cache(runtime);
    const fingerprint = runtimeFingerprint(runtime);
    const zip = (await bytecode.prepare(fingerprint))!;
    const when = new Date(Date.now() - 30 * DAY);
    utimesSync(zip, when, when);
    // Another host's start sweeps: the zip was touched by no one for 30 days, so it goes...
    expect(bytecode.sweep("/elsewhere")).toEqual([zip.slice(dir!.length + 1)]);
    // ...while this host's own start touches it before sweeping.
    const again = (await bytecode.prepare(fingerprint))!;
    expect(Date.now() - statSync(again).mtimeMs).toBeLessThan(DAY);
    expect(bytecode.sweep("/elsewhere", Date.now() + 6 * DAY)).toEqual([]);
    expect(bytecode.sweep("/elsewhere", Date.now() + 8 * DAY)).toEqual([zip.slice(dir!.length + 1)]);
  });
});
