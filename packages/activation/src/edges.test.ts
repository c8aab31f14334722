// Edges the other suites left open (each found by a surviving StrykerJS mutant, `pnpm mutate activation`).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { removeDir, tempDir } from "../test/helpers/tree.js";
import { openDatabase } from "./database.js";
import { digestEntries } from "./digest.js";
import { ActivationError, isActivationError } from "./errors.js";
import { parseManifest } from "./manifest.js";
import { isStaleTemp, sweepStaleTemps, tempPrefix } from "./temp-dirs.js";

describe("digestEntries refuses a name given twice", () => {
  it("with SOURCE_DUPLICATE_NAME, a message quoting the name and the name as its path", () => {
    const entry = { name: Buffer.from("a/b.md"), content: Buffer.from("x") };
    let caught: unknown;
    try {
      digestEntries([entry, { ...entry, content: Buffer.from("y") }]);
    } catch (error) {
      caught = error;
    }
    expect(isActivationError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: "SOURCE_DUPLICATE_NAME", message: 'source name "a/b.md" appears twice', path: "a/b.md" });
  });
});

describe("ActivationError", () => {
  it("carries a cause only when given one", () => {
    expect("cause" in new ActivationError("SOURCE_DUPLICATE_NAME", "m")).toBe(false);
    const cause = new Error("underneath");
    expect(new ActivationError("SOURCE_DUPLICATE_NAME", "m", { cause }).cause).toBe(cause);
  });

  it("isActivationError is false for null, undefined and plain values, never a TypeError", () => {
    for (const value of [null, undefined, 0, "ActivationError", new Error("m")]) expect(isActivationError(value)).toBe(false);
    expect(isActivationError(new ActivationError("SOURCE_DUPLICATE_NAME", "m"))).toBe(true);
  });
});

describe("parseManifest names the first unknown field in code point order", () => {
  const first = (value: Record<string, unknown>) => {
    try {
      parseManifest(value);
    } catch (error) {
      return error as ActivationError;
    }
    throw new Error("parseManifest accepted unknown fields");
  };

  it("past a shared first character, and a name before the longer name it begins", () => {
    expect(first({ ac: 1, ab: 1 })).toMatchObject({ code: "MANIFEST_UNKNOWN_FIELD", field: "ab" });
    expect(first({ ab: 1, a: 1 })).toMatchObject({ code: "MANIFEST_UNKNOWN_FIELD", field: "a" });
    expect(first({ a: 1, ab: 1 })).toMatchObject({ code: "MANIFEST_UNKNOWN_FIELD", field: "a" });
  });
});

describe("sweepStaleTemps", () => {
  it("never removes a temporary directory of this very process", () => {
    const releases = tempDir();
    try {
      const mine = fs.mkdtempSync(tempPrefix(releases));
      expect(isStaleTemp(path.basename(mine), 0)).toBe(false);
      expect(sweepStaleTemps(releases, (dir) => fs.rmSync(dir, { recursive: true }))).toEqual([]);
      expect(fs.existsSync(mine)).toBe(true);
    } finally {
      removeDir(releases);
    }
  });
});

describe("openDatabase", () => {
  it("refuses a file that is not a SQLite database, with SQLite's error, and leaves it as it was", () => {
    const dir = tempDir();
    try {
      const file = path.join(dir, "not.db");
      const bytes = Buffer.alloc(4096, 0x5a);
      fs.writeFileSync(file, bytes);
      expect(() => openDatabase(file)).toThrow(/not a database/);
      expect(fs.readFileSync(file).equals(bytes)).toBe(true);
      expect(fs.readdirSync(dir)).toEqual(["not.db"]);
    } finally {
      removeDir(dir);
    }
  });
});
