import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleDigest, collectRuntime, encodeBundle } from "./bundle.js";
import { isRemoteError } from "./errors.js";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isRemoteError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  dir = mkdtempSync("/tmp/krb-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("collectRuntime", () => {
  it("takes every file under klbr/ but bytecode, sorted by UTF-8 bytes, with the digest of exactly those", () => {
    const root = tree({
      "klbr/worker/__main__.py": "main",
      "klbr/z.py": "z",
      "klbr/\u00e9.py": "e",
      "klbr/A.py": "a",
      "klbr/worker/__pycache__/x.cpython-311.pyc": "bytecode",
      "klbr/stale.pyc": "bytecode",
      "other/ignored.py": "not the runtime",
    });
    const bundle = collectRuntime(root);
    expect(bundle.files.map((f) => f.path)).toEqual(["klbr/A.py", "klbr/worker/__main__.py", "klbr/z.py", "klbr/\u00e9.py"]);
    expect(bundle.files.map((f) => f.data.toString())).toEqual(["a", "main", "z", "e"]);
    expect(bundle.digest).toBe(bundleDigest(bundle.files));
  });

  it("refuses a runtime without a worker, a symlink, or a directory it cannot read", () => {
    const root = tree({ "klbr/a.py": "a" });
    expect(refusal(() => collectRuntime(root))).toBe(`REMOTE_RUNTIME_INVALID: ${join(root, "klbr")} holds no worker (klbr/worker/__main__.py)`);
    writeFileSync(join(root, "klbr", "worker"), "a file, not the package");
    expect(refusal(() => collectRuntime(root))).toMatch(/holds no worker/);
    rmSync(join(root, "klbr", "worker"));
    mkdirSync(join(root, "klbr", "worker"));
    writeFileSync(join(root, "klbr", "worker", "__main__.py"), "main");
    expect(collectRuntime(root).files).toHaveLength(2);
    symlinkSync(join(root, "klbr", "a.py"), join(root, "klbr", "link.py"));
    expect(refusal(() => collectRuntime(root))).toBe(`REMOTE_RUNTIME_INVALID: ${join(root, "klbr", "link.py")} is neither a file nor a directory`);
    expect(refusal(() => collectRuntime(join(root, "absent")))).toMatch(new RegExp(`^REMOTE_RUNTIME_INVALID: cannot read the runtime at ${join(root, "absent", "klbr")}: ENOENT`));
  });
});

describe("bundleDigest", () => {
  it("is SHA-256 over u64BE name length, name, u64BE size, bytes, per file in byte order", () => {
    const u64 = (n: number) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(BigInt(n));
      return b;
    };
    const files = [{ path: "klbr/\u00e9", data: Buffer.from("xy") }, { path: "klbr/z", data: Buffer.alloc(0) }];
    const expected = createHash("sha256");
    for (const f of [files[1]!, files[0]!]) expected.update(u64(Buffer.byteLength(f.path))).update(f.path).update(u64(f.data.length)).update(f.data);
    expect(bundleDigest(files)).toBe(expected.digest("hex"));
    expect(bundleDigest([])).toBe(createHash("sha256").digest("hex"));
  });
});

describe("encodeBundle", () => {
  it("sends each file's path and base64 bytes, nothing else", () => {
    const bundle = { digest: "d", files: [{ path: "klbr/a.py", data: Buffer.from([0, 255, 10]) }] };
    expect(encodeBundle(bundle)).toBe('{"files":[{"path":"klbr/a.py","data":"AP8K"}]}');
  });
});
