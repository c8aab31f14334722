import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports exactly these names (drift fails here)", () => {
    expect(Object.keys(api).sort()).toEqual([
      "ACTIVATION_ERROR_CODES",
      "ACTIVATION_MIGRATIONS_TABLE",
      "ActivationError",
      "DEFAULT_BUSY_TIMEOUT_MS",
      "DEFAULT_HANDSHAKE_TIMEOUT_MS",
      "DIGEST_PATTERN",
      "ENTRYPOINT_PATTERN",
      "MANIFEST_FILE",
      "MANIFEST_SLOTS",
      "MAX_SOURCE_BYTES",
      "MAX_SOURCE_FILES",
      "MAX_WALK_ENTRIES",
      "SOURCE_EXTENSIONS",
      "activationHistory",
      "activationMigrationsFolder",
      "activationState",
      "compareNames",
      "conflictError",
      "decodeManifest",
      "digestEntries",
      "digestSourceFiles",
      "isActivationError",
      "manifestPackage",
      "openActivationStore",
      "openDatabase",
      "parseManifest",
      "readManifest",
      "runHandshake",
      "scanSource",
      "snapshotRelease",
      "sourceDigest",
      "verifyRelease",
    ]);
  });

  it("ships its migrations folder with SQL and meta, stamped in increasing order", async () => {
    const fs = await import("node:fs");
    const path = await import("node:path");
    const journal = JSON.parse(fs.readFileSync(path.join(api.activationMigrationsFolder, "meta", "_journal.json"), "utf8")) as {
      entries: { when: number; tag: string }[];
    };
    expect(journal.entries.length).toBeGreaterThan(0);
    for (const entry of journal.entries) expect(fs.existsSync(path.join(api.activationMigrationsFolder, `${entry.tag}.sql`))).toBe(true);
    const whens = journal.entries.map((e) => e.when);
    expect(whens).toEqual([...whens].sort((a, b) => a - b));
    expect(new Set(whens).size).toBe(whens.length);
  });

  it("recognises its errors by brand and keeps codes stable", () => {
    const error = new api.ActivationError("SOURCE_SYMLINK", "x", { path: "a.py" });
    expect(api.isActivationError(error)).toBe(true);
    expect(api.isActivationError(new Error("x"))).toBe(false);
    expect(error).toMatchObject({ code: "SOURCE_SYMLINK", path: "a.py", name: "ActivationError" });
    expect(new Set(api.ACTIVATION_ERROR_CODES).size).toBe(api.ACTIVATION_ERROR_CODES.length);
  });
});
