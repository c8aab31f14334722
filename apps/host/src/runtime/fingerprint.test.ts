import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RuntimeFingerprint, runtimeFingerprint } from "./fingerprint";

// The runtime fingerprint a spare's take compares (C19): walked once, again only after a change.
const dirs: string[] = [];
const fingerprints: RuntimeFingerprint[] = [];
afterEach(() => {
  for (const f of fingerprints.splice(0)) f.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runtime(): string {
  const dir = mkdtempSync(join(tmpdir(), "klbr-fp-"));
  dirs.push(dir);
  mkdirSync(join(dir, "klbr", "worker"), { recursive: true });
  writeFileSync(join(dir, "klbr", "__init__.py"), "");
  writeFileSync(join(dir, "klbr", "worker", "main.py"), "x = 1\n");
  return dir;
}

function fingerprint(dir: string): RuntimeFingerprint {
  const f = new RuntimeFingerprint(dir);
  fingerprints.push(f);
  return f;
}

/** Read until the value differs from `before` (the watcher's event is what changes it); bounded. */
async function changed(f: RuntimeFingerprint, before: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const now = f.value();
    if (now !== before) return now;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the fingerprint never changed");
}

describe("RuntimeFingerprint", () => {
  it("walks once however often it is read while nothing changes", () => {
    const dir = runtime();
    const f = fingerprint(dir);
    const first = f.value();
    for (let i = 0; i < 1000; i++) expect(f.value()).toBe(first);
    expect(f.walks).toBe(1);
    expect(first).toBe(runtimeFingerprint(dir));
  });

  it("walks again after a file of the runtime changed, and only then", async () => {
    const dir = runtime();
    const f = fingerprint(dir);
    const before = f.value();
    writeFileSync(join(dir, "klbr", "worker", "main.py"), "x = 22\n");
    const after = await changed(f, before);
    expect(after).toBe(runtimeFingerprint(dir));
    const walks = f.walks;
    for (let i = 0; i < 100; i++) f.value();
    expect(f.walks).toBe(walks);
  });

  it("sees a file added in a subdirectory created after the first walk", async () => {
    const dir = runtime();
    const f = fingerprint(dir);
    const before = f.value();
    mkdirSync(join(dir, "klbr", "extra"));
    const withDir = await changed(f, before);
    writeFileSync(join(dir, "klbr", "extra", "new.py"), "y = 2\n");
    expect(await changed(f, withDir)).toBe(runtimeFingerprint(dir));
  });

  it("ignores the bytecode cache", () => {
    const dir = runtime();
    const before = runtimeFingerprint(dir);
    mkdirSync(join(dir, "klbr", "__pycache__"));
    writeFileSync(join(dir, "klbr", "__pycache__", "x.cpython-311.pyc"), "");
    expect(runtimeFingerprint(dir)).toBe(before);
  });

  it("walks on every read once closed (no watcher: never stale)", () => {
    const dir = runtime();
    const f = fingerprint(dir);
    f.close();
    f.value();
    f.value();
    expect(f.walks).toBe(2);
  });
});
