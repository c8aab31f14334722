import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadVectors, refusal, scratchDirs } from "../test/helpers/tree.js";
import { decodeManifest, manifestPackage, parseManifest, readManifest } from "./manifest.js";

function bytesOf(input: { json?: string; hex?: string }): Buffer {
  return input.hex !== undefined ? Buffer.from(input.hex, "hex") : Buffer.from(input.json!, "utf8");
}

describe("manifest vectors (fixtures/digest/manifests.json)", () => {
  for (const c of loadVectors<{ json?: string; hex?: string }, { hooks: Record<string, string>; package: string }>("digest/manifests.json")) {
    it(c.description, () => {
      if (c.error) {
        const error = refusal(() => decodeManifest(bytesOf(c.input)));
        expect({ code: error.code, field: error.field }).toEqual(c.error);
      } else {
        const manifest = decodeManifest(bytesOf(c.input));
        expect(manifest.hooks).toEqual(c.expected!.hooks);
        expect(manifestPackage(manifest)).toBe(c.expected!.package);
      }
    });
  }
});

describe("readManifest / parseManifest", () => {
  const base = scratchDirs();

  it("refuses a missing manifest, naming the file", () => {
    const dir = base();
    const error = refusal(() => readManifest(dir));
    expect(error.code).toBe("MANIFEST_MISSING");
    expect(error.message).toContain(path.join(dir, "manifest.json"));
  });

  it("refuses a symlinked manifest", () => {
    const dir = base();
    fs.writeFileSync(path.join(dir, "real.json"), JSON.stringify({ version: 1, hooks: { "attention.plan": "p:a", "delivery.review": "p:d" } }));
    fs.symlinkSync("real.json", path.join(dir, "manifest.json"));
    expect(refusal(() => readManifest(dir)).code).toBe("SOURCE_SYMLINK");
  });

  it("refuses a FIFO or a folder named manifest.json without waiting on it", () => {
    const fifo = base();
    const folder = base();
    execFileSync("mkfifo", [path.join(fifo, "manifest.json")]);
    fs.mkdirSync(path.join(folder, "manifest.json"));
    for (const dir of [fifo, folder]) {
      const error = refusal(() => readManifest(dir));
      expect([error.code, error.path]).toEqual(["SOURCE_NOT_REGULAR", "manifest.json"]);
      expect(error.message).toContain(path.join(dir, "manifest.json"));
    }
  });

  it("reads a valid manifest", () => {
    const dir = base();
    fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify({ version: 1, hooks: { "attention.plan": "p.m:a", "delivery.review": "p.m:d" } }));
    expect(readManifest(dir)).toEqual({ version: 1, hooks: { "attention.plan": "p.m:a", "delivery.review": "p.m:d" } });
  });

  it("names the field and the value in messages", () => {
    const error = refusal(() => parseManifest({ version: 1, hooks: { "attention.plan": "p:a", "delivery.review": 3 } }));
    expect(error.field).toBe("hooks.delivery.review");
    expect(error.message).toContain("hooks.delivery.review");
    expect(error.message).toContain("3");
  });
});
