import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One entry of a fixture tree: a file (text or hex, optionally padded), a directory, or a symlink. */
export interface TreeEntry {
  path?: string;
  path_hex?: string;
  text?: string;
  hex?: string;
  pad?: { hex: string; to: number };
  dir?: true;
  symlink?: string;
}

/** The bytes a fixture file entry describes. */
export function entryBytes(entry: TreeEntry): Buffer {
  let bytes = entry.text !== undefined ? Buffer.from(entry.text, "utf8") : Buffer.from(entry.hex ?? "", "hex");
  if (entry.pad) {
    const fill = Buffer.from(entry.pad.hex, "hex");
    const parts = [bytes];
    for (let n = bytes.length; n < entry.pad.to; n += fill.length) parts.push(fill);
    bytes = Buffer.concat(parts).subarray(0, entry.pad.to);
  }
  return bytes;
}

/** Create a fixture tree under `root` (parents are made as needed). */
export async function buildTree(root: string, entries: readonly TreeEntry[]): Promise<void> {
  await mkdir(root, { recursive: true });
  for (const entry of entries) {
    const path: string | Buffer =
      entry.path_hex !== undefined
        ? Buffer.concat([Buffer.from(root + "/"), Buffer.from(entry.path_hex, "hex")])
        : join(root, entry.path ?? "");
    if (typeof path === "string") await mkdir(dirname(path), { recursive: true });
    if (entry.dir) await mkdir(path, { recursive: true });
    else if (entry.symlink !== undefined) await symlink(entry.symlink, path);
    else await writeFile(path, entryBytes(entry));
  }
}

/** A fresh private temporary directory. */
export function tempDir(prefix = "klbr-skills-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Load a fixtures/skills vector file (a {cases} object or an array). */
export function loadVectors<T>(name: string): T[] {
  const path = fileURLToPath(new URL(`../../../fixtures/skills/${name}`, import.meta.url));
  const data = JSON.parse(readFileSync(path, "utf8")) as { cases: T[] } | T[];
  const cases = Array.isArray(data) ? data : data.cases;
  if (cases.length === 0) throw new Error(`${name} holds no cases`);
  return cases;
}
