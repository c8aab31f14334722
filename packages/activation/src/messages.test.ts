// The exact words of every manifest and release refusal (the operator reads them; the vectors pin
// only the codes), and UTF-8 name validation checked exhaustively around every boundary byte.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { refusal, scratchDirs, writeSource } from "../test/helpers/tree.js";
import { type ActivationError, isActivationError } from "./errors.js";
import { decodeManifest, parseManifest, readManifest } from "./manifest.js";
import { isUtf8 } from "./names.js";
import { snapshotRelease, verifyRelease } from "./release.js";

const base = scratchDirs();

const HOOKS = { "attention.plan": "pol.main:attention", "delivery.review": "pol.main:delivery" };

describe("parseManifest's messages", () => {
  const cases: [string, unknown, string, string, string][] = [
    ["an array", [], "MANIFEST_NOT_OBJECT", "$", "manifest must be a JSON object"],
    ["null", null, "MANIFEST_NOT_OBJECT", "$", "manifest must be a JSON object"],
    ["a string", "{}", "MANIFEST_NOT_OBJECT", "$", "manifest must be a JSON object"],
    ["an unknown top field", { version: 1, hooks: HOOKS, extra: 1 }, "MANIFEST_UNKNOWN_FIELD", "extra", 'manifest field "extra" is not allowed (only "version" and "hooks")'],
    ["no version", { hooks: HOOKS }, "MANIFEST_MISSING_FIELD", "version", 'manifest field "version" is missing'],
    ["version 2", { version: 2, hooks: HOOKS }, "MANIFEST_BAD_VERSION", "version", 'manifest field "version" must be 1, got 2'],
    ['version "1"', { version: "1", hooks: HOOKS }, "MANIFEST_BAD_VERSION", "version", 'manifest field "version" must be 1, got "1"'],
    ["no hooks", { version: 1 }, "MANIFEST_MISSING_FIELD", "hooks", 'manifest field "hooks" is missing'],
    ["hooks an array", { version: 1, hooks: [] }, "MANIFEST_NOT_OBJECT", "hooks", 'manifest field "hooks" must be a JSON object'],
    [
      "an unknown slot",
      { version: 1, hooks: { ...HOOKS, "turn.end": "pol.main:x" } },
      "MANIFEST_UNKNOWN_FIELD",
      "hooks.turn.end",
      'manifest field "hooks.turn.end" is not a decision slot (only attention.plan, delivery.review)',
    ],
    ["a missing slot", { version: 1, hooks: { "attention.plan": HOOKS["attention.plan"] } }, "MANIFEST_MISSING_SLOT", "hooks.delivery.review", 'manifest field "hooks.delivery.review" is missing'],
    [
      "an entrypoint without an attribute",
      { version: 1, hooks: { ...HOOKS, "attention.plan": "pol.main" } },
      "MANIFEST_BAD_ENTRYPOINT",
      "hooks.attention.plan",
      'manifest field "hooks.attention.plan" must be "module.path:attribute", got "pol.main"',
    ],
    [
      "an entrypoint that is an array holding a good one",
      { version: 1, hooks: { ...HOOKS, "delivery.review": ["pol.main:delivery"] } },
      "MANIFEST_BAD_ENTRYPOINT",
      "hooks.delivery.review",
      'manifest field "hooks.delivery.review" must be "module.path:attribute", got ["pol.main:delivery"]',
    ],
    [
      "entrypoints in two packages",
      { version: 1, hooks: { ...HOOKS, "delivery.review": "other.main:delivery" } },
      "MANIFEST_PACKAGE_MISMATCH",
      "hooks.delivery.review",
      'manifest entrypoints must share one top-level package: "pol" and "other"',
    ],
  ];
  for (const [what, value, code, field, message] of cases) {
    it(`${what}: ${code}`, () => {
      expect(refusal(() => parseManifest(value))).toMatchObject({ code, field, message, path: "manifest.json" });
    });
  }
});

describe("decodeManifest's messages", () => {
  it("bytes that are not UTF-8", () => {
    const got = refusal(() => decodeManifest(Buffer.from([0x7b, 0xff, 0x7d])));
    expect(got).toMatchObject({ code: "MANIFEST_INVALID_JSON", field: "$", path: "manifest.json", message: "manifest.json is not valid UTF-8" });
    expect(got.cause).toBeInstanceOf(TypeError);
  });

  it("text that is not JSON, with the parser's words", () => {
    const got = refusal(() => decodeManifest(Buffer.from("{version")));
    expect(got).toMatchObject({ code: "MANIFEST_INVALID_JSON", field: "$", path: "manifest.json" });
    expect(got.message).toBe(`manifest.json is not valid JSON: ${(got.cause as Error).message}`);
    expect(got.cause).toBeInstanceOf(SyntaxError);
  });

  it("nesting past the limit, and a repeated key", () => {
    const deep = `${"[".repeat(129)}${"]".repeat(129)}`;
    expect(refusal(() => decodeManifest(Buffer.from(deep)))).toMatchObject({
      code: "MANIFEST_INVALID_JSON",
      field: "$",
      path: "manifest.json",
      message: "manifest.json nests 129 levels deep; at most 128",
    });
    expect(refusal(() => decodeManifest(Buffer.from('{"version":1,"version":1}')))).toMatchObject({
      code: "MANIFEST_INVALID_JSON",
      field: "$",
      path: "manifest.json",
      message: 'manifest.json repeats the key "version"',
    });
  });
});

describe("readManifest", () => {
  it("a missing manifest, or a root that is a file: MANIFEST_MISSING naming the file", () => {
    const dir = base();
    const file = path.join(dir, "manifest.json");
    expect(refusal(() => readManifest(dir))).toMatchObject({ code: "MANIFEST_MISSING", field: "$", path: "manifest.json", message: `${JSON.stringify(file)} does not exist` });
    fs.writeFileSync(path.join(dir, "plain"), "x");
    const under = path.join(dir, "plain", "manifest.json");
    const got = refusal(() => readManifest(path.join(dir, "plain")));
    expect(got).toMatchObject({ code: "MANIFEST_MISSING", message: `${JSON.stringify(under)} does not exist` });
    expect((got.cause as NodeJS.ErrnoException).code).toBe("ENOTDIR");
  });

  it("a symlinked manifest: SOURCE_SYMLINK naming the file", () => {
    const dir = base();
    writeSource(dir);
    fs.renameSync(path.join(dir, "manifest.json"), path.join(dir, "real.json"));
    fs.symlinkSync("real.json", path.join(dir, "manifest.json"));
    const got = refusal(() => readManifest(dir));
    expect(got).toMatchObject({ code: "SOURCE_SYMLINK", path: "manifest.json", message: `${JSON.stringify(path.join(dir, "manifest.json"))} is a symbolic link` });
    expect((got.cause as NodeJS.ErrnoException).code).toBe("ELOOP");
  });

  it("a manifest that is a directory: SOURCE_NOT_REGULAR naming the file", () => {
    const dir = base();
    fs.mkdirSync(path.join(dir, "manifest.json"));
    expect(refusal(() => readManifest(dir))).toMatchObject({
      code: "SOURCE_NOT_REGULAR",
      path: "manifest.json",
      message: `${JSON.stringify(path.join(dir, "manifest.json"))} is not a regular file`,
    });
  });

  it("any other failure to open it is thrown as it is", () => {
    const error = (() => {
      try {
        readManifest(path.join(base(), "n".repeat(300)));
      } catch (e) {
        return e as NodeJS.ErrnoException;
      }
      throw new Error("expected an error");
    })();
    expect(isActivationError(error)).toBe(false);
    expect(error.code).toBe("ENAMETOOLONG");
  });
});

describe("release refusals' messages", () => {
  function draft(): { dir: string; releases: string } {
    const root = base();
    const dir = path.join(root, "draft");
    fs.mkdirSync(dir);
    writeSource(dir);
    return { dir, releases: path.join(root, "releases") };
  }

  it("a draft without a manifest names the manifest it looked for", () => {
    const { dir, releases } = draft();
    fs.rmSync(path.join(dir, "manifest.json"));
    expect(refusal(() => snapshotRelease(dir, releases))).toMatchObject({
      code: "MANIFEST_MISSING",
      field: "$",
      path: "manifest.json",
      message: `${JSON.stringify(path.join(dir, "manifest.json"))} does not exist`,
    });
  });

  it("a release whose name is not a digest, and one whose tree is not its name", () => {
    const { dir } = draft();
    expect(refusal(() => verifyRelease(dir))).toMatchObject({
      code: "RELEASE_BAD_NAME",
      path: dir,
      message: 'release directory name "draft" is not a 64-character lowercase hex digest',
    });
    const wrong = path.join(path.dirname(dir), "0".repeat(64));
    fs.cpSync(dir, wrong, { recursive: true });
    const got = refusal(() => verifyRelease(wrong));
    expect(got.code).toBe("RELEASE_DIGEST_MISMATCH");
    expect(got.path).toBe(wrong);
    expect(got.message).toMatch(new RegExp(`^release ${JSON.stringify(wrong).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} holds a tree with digest [0-9a-f]{64}, not its name$`));
  });
});

describe("a release on disk", () => {
  function modes(root: string): Record<string, string> {
    const out: Record<string, string> = { ".": (fs.statSync(root).mode & 0o777).toString(8) };
    const walk = (rel: string) => {
      for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
        const name = rel ? `${rel}/${entry.name}` : entry.name;
        out[name] = (fs.lstatSync(path.join(root, name)).mode & 0o777).toString(8);
        if (entry.isDirectory()) walk(name);
      }
    };
    walk("");
    return out;
  }
  const READ_ONLY = { ".": "555", "main.py": "444", "manifest.json": "444", sub: "555", "sub/b.md": "444" };

  function snapshot(): { dir: string; releases: string; target: string } {
    const root = base();
    const dir = path.join(root, "draft");
    fs.mkdirSync(dir);
    writeSource(dir, { "sub/b.md": "b\n" });
    const releases = path.join(root, "releases");
    return { dir, releases, target: snapshotRelease(dir, releases).path };
  }

  it("is read-only: its files 0444, its directories 0555, its own directory too", () => {
    expect(modes(snapshot().target)).toEqual(READ_ONLY);
  });

  it("is made read-only again when a snapshot of the same bytes reuses it", () => {
    const { dir, releases, target } = snapshot();
    fs.chmodSync(target, 0o755);
    fs.chmodSync(path.join(target, "sub"), 0o755);
    fs.chmodSync(path.join(target, "sub", "b.md"), 0o644);
    expect(snapshotRelease(dir, releases)).toMatchObject({ reused: true, path: target });
    expect(modes(target)).toEqual(READ_ONLY);
  });

  it("that no longer verifies is not reused, and the refusal says why and what to do", () => {
    const { dir, releases, target } = snapshot();
    fs.chmodSync(target, 0o755);
    fs.chmodSync(path.join(target, "main.py"), 0o644);
    fs.appendFileSync(path.join(target, "main.py"), "# changed\n");
    const got = refusal(() => snapshotRelease(dir, releases));
    expect(got.code).toBe("RELEASE_CORRUPT");
    expect(got.path).toBe(target);
    expect(isActivationError(got.cause) && got.cause.code).toBe("RELEASE_DIGEST_MISMATCH");
    const inner = (got.cause as ActivationError).message;
    expect(got.message).toBe(`existing release ${JSON.stringify(target)} does not verify (RELEASE_DIGEST_MISMATCH: ${inner}); move it aside and snapshot again`);
  });
});

describe("isUtf8 around every boundary byte", () => {
  const fatal = new TextDecoder("utf-8", { fatal: true });
  const decodes = (bytes: Uint8Array) => {
    try {
      fatal.decode(bytes);
      return true;
    } catch {
      return false;
    }
  };
  // The continuation bytes' edges and a byte of each other kind.
  const EDGES = [0x00, 0x41, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0, 0xbe, 0xbf, 0xc0, 0xc2, 0xe0, 0xf4, 0xff];

  it("agrees with a fatal TextDecoder on every byte alone, and followed by each edge", () => {
    const wrong: string[] = [];
    for (let a = 0; a < 256; a++) {
      if (isUtf8(Uint8Array.of(a)) !== decodes(Uint8Array.of(a))) wrong.push(a.toString(16));
      for (const b of EDGES) {
        const bytes = Uint8Array.of(a, b);
        if (isUtf8(bytes) !== decodes(bytes)) wrong.push(Buffer.from(bytes).toString("hex"));
      }
    }
    expect(wrong).toEqual([]);
  });

  it("agrees on every byte followed by two or three more at the edges", () => {
    const wrong: string[] = [];
    const CONTINUATION_EDGES = [0x7f, 0x80, 0xbf, 0xc0];
    const check = (bytes: Uint8Array) => {
      if (isUtf8(bytes) !== decodes(bytes)) wrong.push(Buffer.from(bytes).toString("hex"));
    };
    for (let a = 0x80; a < 256; a++) {
      for (const b of EDGES) {
        for (const c of EDGES) check(Uint8Array.of(a, b, c));
        for (const c of CONTINUATION_EDGES) for (const d of CONTINUATION_EDGES) check(Uint8Array.of(a, b, c, d));
      }
    }
    expect(wrong).toEqual([]);
  });
});
