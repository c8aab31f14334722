import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RemoteError } from "./errors.js";

/** The Python runtime as it is copied to a target: `klbr/...` names and their bytes. */
export interface RuntimeBundle {
  /** The source identity of the files (spec "Source revisions"): the `<digest>` of `klbr-<digest>`. */
  digest: string;
  files: Array<{ path: string; data: Buffer }>;
}

/** Sort by UTF-8 bytes (C2), not UTF-16 units. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** SHA-256 over the files sorted by name, each as u64BE name length, name, u64BE size, bytes. */
export function bundleDigest(files: ReadonlyArray<{ path: string; data: Buffer }>): string {
  const hash = createHash("sha256");
  const u64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(n));
    return b;
  };
  for (const file of [...files].sort((a, b) => byBytes(a.path, b.path))) {
    const name = Buffer.from(file.path);
    hash.update(u64(name.length)).update(name).update(u64(file.data.length)).update(file.data);
  }
  return hash.digest("hex");
}

/**
 * Collect `<pythonDir>/klbr` (the worker runtime, stdlib only): every regular file but bytecode
 * caches. Symlinks are refused rather than followed, so the copy is exactly what the digest names.
 */
export function collectRuntime(pythonDir: string): RuntimeBundle {
  const files: RuntimeBundle["files"] = [];
  const walk = (dir: string, rel: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      throw new RemoteError("REMOTE_RUNTIME_INVALID", `cannot read the runtime at ${dir}: ${(error as Error).message}`);
    }
    for (const entry of entries) {
      if (entry.name === "__pycache__" || entry.name.endsWith(".pyc")) continue;
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(join(dir, entry.name), path);
      else if (entry.isFile()) files.push({ path, data: readFileSync(join(dir, entry.name)) });
      else throw new RemoteError("REMOTE_RUNTIME_INVALID", `${join(dir, entry.name)} is neither a file nor a directory`);
    }
  };
  walk(join(pythonDir, "klbr"), "klbr");
  if (!files.some((f) => f.path === "klbr/worker/__main__.py")) {
    throw new RemoteError("REMOTE_RUNTIME_INVALID", `${join(pythonDir, "klbr")} holds no worker (klbr/worker/__main__.py)`);
  }
  files.sort((a, b) => byBytes(a.path, b.path));
  return { digest: bundleDigest(files), files };
}

/** The bundle as `klbr/remote_install.py` reads it on stdin. */
export function encodeBundle(bundle: RuntimeBundle): string {
  return JSON.stringify({ files: bundle.files.map((f) => ({ path: f.path, data: f.data.toString("base64") })) });
}
